#!/usr/bin/python3
"""generate_eos_check.py MHAVIZ: `--generate` stops at the model's own end tokens, read
as Hugging Face's generate() reads them: generation_config.json's eos_token_id where the
folder has that file (an integer, a list, or none), else config.json's, else the config
class's default (LlamaConfig: 2; Qwen2Config: none).

A random Llama checkpoint (llama_gen.py, byte-level tokenizer, 300 merges) is written;
its most likely continuation of the text, 12 tokens, is computed here by llama_ref.py
(float64 PyTorch, independent of mhaviz). E is the first token of that continuation at
step k >= 2 not seen before it, F a token it never writes. Then, each with
`--generate 12 --sample-temperature 0 --dump`:
  - config.json eos_token_id E: the steps are the reference's first k + 1, "stopped"
    "end of text", the text printed and tokens.json end before E;
  - config.json [F, E] (a list): the same;
  - generation_config.json F beside config.json E: 12 steps, stopped "length" (the
    generation config wins);
  - generation_config.json without eos_token_id beside config.json E: 12 steps (it
    names none: Hugging Face does not fall back to config.json);
  - config.json silent, model_type llama: eos_token_ids [2], from "the default"; qwen2:
    none;
  - eos_token_id "x", eos_token_id past the vocabulary, generation_config.json not
    JSON: exit 2 with one "mhaviz: " line naming the file, nothing written.
Exits 1 with "FAIL where: expected X, got Y" lines."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import llama_ref  # noqa: E402

FAILURES = []
TEXT = "The quick brown fox"
STEPS = 12


def fail(where, expected, got):
    FAILURES.append(where)
    print(f"FAIL {where}: expected {expected}, got {got}")


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)


def set_config(ckpt, **fields):
    path = os.path.join(ckpt, "config.json")
    with open(path) as f:
        c = json.load(f)
    for k, v in fields.items():
        if v is None:
            c.pop(k, None)
        else:
            c[k] = v
    write_json(path, c)


def generate(mhaviz, ckpt, out):
    shutil.rmtree(out, ignore_errors=True)
    return subprocess.run([mhaviz, "--model", ckpt, "--text", TEXT, "--generate", str(STEPS),
                           "--sample-temperature", "0", "--dump", out],
                          capture_output=True, timeout=300)


def read_dump(out):
    with open(os.path.join(out, "generated.json")) as f:
        g = json.load(f)
    with open(os.path.join(out, "tokens.json")) as f:
        t = json.load(f)
    return g, t


def reference_continuation(ckpt, prompt):
    loaded = llama_ref.load(ckpt)
    ids = list(prompt)
    for _ in range(STEPS):
        logits = llama_ref.forward(ckpt, ids, loaded=loaded)["logits"]
        ids.append(int(max(range(len(logits)), key=lambda i: (logits[i], -i))))
    return ids[len(prompt):]


def expect_stop(mhaviz, ckpt, tmp, where, cont, k, prompt):
    r = generate(mhaviz, ckpt, os.path.join(tmp, "out"))
    if r.returncode != 0:
        fail(where, "exit 0", (r.returncode, r.stderr[:200]))
        return
    g, t = read_dump(os.path.join(tmp, "out"))
    got = [s["id"] for s in g["steps"]]
    if got != cont[:k + 1] or g["stopped"] != "end of text":
        fail(where, (cont[:k + 1], "end of text"), (got, g["stopped"]))
    if t["ids"] != prompt + cont[:k]:
        fail(where + ": tokens.json", prompt + cont[:k], t["ids"])


def expect_length(mhaviz, ckpt, tmp, where, cont, ends, source):
    r = generate(mhaviz, ckpt, os.path.join(tmp, "out"))
    if r.returncode != 0:
        fail(where, "exit 0", (r.returncode, r.stderr[:200]))
        return
    g, _ = read_dump(os.path.join(tmp, "out"))
    got = [s["id"] for s in g["steps"]]
    if got != cont or g["stopped"] != "length":
        fail(where, (cont, "length"), (got, g["stopped"]))
    if g.get("eos_token_ids") != ends or g.get("eos_from") != source:
        fail(where + ": the end tokens", (ends, source), (g.get("eos_token_ids"), g.get("eos_from")))


def expect_refused(mhaviz, ckpt, tmp, where, file_name):
    out = os.path.join(tmp, "refused")
    r = generate(mhaviz, ckpt, out)
    err = r.stderr.decode(errors="replace").splitlines()
    if r.returncode != 2 or len(err) != 1 or not err[0].startswith("mhaviz: ") or \
            file_name not in err[0] or r.stdout:
        fail(where, f"exit 2, one mhaviz: line naming {file_name}, nothing printed",
             (r.returncode, err, r.stdout[:40]))
    if os.path.exists(out):
        fail(where, "no dump written", sorted(os.listdir(out)))


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    mhaviz = os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "ll")
        subprocess.run([sys.executable, os.path.join(HERE, "llama_gen.py"), ckpt, "--type",
                        "llama", "--tokenizer", "bytelevel", "--vocab", "300", "--seed", "5"],
                       check=True, capture_output=True, timeout=300)
        set_config(ckpt, eos_token_id=None, bos_token_id=None)
        # the class default (LlamaConfig eos_token_id = 2) and the prompt's ids
        r = generate(mhaviz, ckpt, os.path.join(tmp, "out"))
        if r.returncode != 0:
            fail("config.json silent", "exit 0", (r.returncode, r.stderr[:200]))
            return 1
        g, t = read_dump(os.path.join(tmp, "out"))
        prompt = t["ids"][:g["prompt_tokens"]]
        if g.get("eos_token_ids") != [2] or g.get("eos_from") != "the default":
            fail("llama, config.json silent", ([2], "the default"),
                 (g.get("eos_token_ids"), g.get("eos_from")))
        cont = reference_continuation(ckpt, prompt)
        k = next((i for i in range(2, STEPS) if cont[i] not in cont[:i]), None)
        vocab = json.load(open(os.path.join(ckpt, "config.json")))["vocab_size"]
        never = next(i for i in range(3, vocab) if i not in cont)
        if k is None or 2 in cont:
            fail("the reference continuation", "a new token at step 2 or later and no id 2",
                 cont)
            return 1
        e = cont[k]
        set_config(ckpt, eos_token_id=e)
        expect_stop(mhaviz, ckpt, tmp, f"config.json eos_token_id {e}", cont, k, prompt)
        set_config(ckpt, eos_token_id=[never, e])
        expect_stop(mhaviz, ckpt, tmp, f"config.json eos_token_id [{never}, {e}]", cont, k,
                    prompt)
        gen = os.path.join(ckpt, "generation_config.json")
        write_json(gen, {"eos_token_id": never, "bos_token_id": 1})
        expect_length(mhaviz, ckpt, tmp, "generation_config.json beside config.json", cont,
                      [never], "generation_config.json")
        write_json(gen, {"bos_token_id": 1})
        expect_length(mhaviz, ckpt, tmp, "generation_config.json without eos_token_id", cont,
                      [], "generation_config.json")
        os.remove(gen)
        qwen = os.path.join(tmp, "qw")
        subprocess.run([sys.executable, os.path.join(HERE, "llama_gen.py"), qwen, "--type",
                        "qwen2", "--tokenizer", "bytelevel", "--vocab", "300"],
                       check=True, capture_output=True, timeout=300)
        set_config(qwen, eos_token_id=None)
        r = generate(mhaviz, qwen, os.path.join(tmp, "out"))
        g = read_dump(os.path.join(tmp, "out"))[0] if r.returncode == 0 else {}
        if g.get("eos_token_ids") != [] or g.get("eos_from") != "the default" or \
                len(g.get("steps", [])) != STEPS:
            fail("qwen2, config.json silent", ([], "the default", STEPS),
                 (r.returncode, g.get("eos_token_ids"), g.get("eos_from")))
        for where, value in (("eos_token_id \"x\"", "x"),
                             (f"eos_token_id {vocab}", vocab),
                             ("eos_token_id [1, -1]", [1, -1])):
            set_config(ckpt, eos_token_id=value)
            expect_refused(mhaviz, ckpt, tmp, where, "config.json")
        set_config(ckpt, eos_token_id=e)
        with open(gen, "w") as f:
            f.write("{\"eos_token_id\": 1,")
        expect_refused(mhaviz, ckpt, tmp, "generation_config.json not JSON",
                       "generation_config.json")
    if FAILURES:
        return 1
    print("generate_eos_check: --generate stops at generation_config.json's, config.json's "
          "or the class's end tokens, as the reference continuation says")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
