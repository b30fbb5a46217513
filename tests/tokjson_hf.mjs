// tokjson_hf.mjs: Hugging Face's tokenizers (the npm package @huggingface/tokenizers,
// found in the folder MHAVIZ_HF_TOKENIZERS names: a node_modules' parent) on the same
// input as tokjson_driver: node tokjson_hf.mjs TOKENIZER_JSON [-s] < texts, each text
// "LEN\n" then LEN bytes (read as UTF-8, ill-formed bytes as U+FFFD); one line of ids
// per text. --bench N: stdin is one text, encoded N times: "TOKENS tokens, MS ms".
import fs from "fs";
import path from "path";
import { pathToFileURL } from "url";

const root = process.env.MHAVIZ_HF_TOKENIZERS;
const lib = path.join(root, "node_modules/@huggingface/tokenizers/dist/tokenizers.mjs");
const { Tokenizer } = await import(pathToFileURL(lib).href);
const args = process.argv.slice(2);
const file = args[0];
const special = args.includes("-s");
const json = JSON.parse(fs.readFileSync(file, "utf8"));
const cfgPath = path.join(path.dirname(file), "tokenizer_config.json");
const cfg = fs.existsSync(cfgPath) ? JSON.parse(fs.readFileSync(cfgPath, "utf8")) : {};
const tok = new Tokenizer(json, cfg);
const input = fs.readFileSync(0);
const bi = args.indexOf("--bench");
if (bi >= 0) {
  const n = Number(args[bi + 1]);
  const text = input.toString("utf8");
  let count = 0;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) count = tok.encode(text, { add_special_tokens: false }).ids.length;
  console.log(`${count} tokens, ${((performance.now() - t0) / n).toFixed(1)} ms per encode`);
} else {
  const out = [];
  for (let at = 0; at < input.length; ) {
    const nl = input.indexOf(10, at);
    if (nl < 0) break;
    const len = Number(input.subarray(at, nl).toString());
    const text = new TextDecoder("utf-8").decode(input.subarray(nl + 1, nl + 1 + len));
    at = nl + 1 + len;
    const ids = tok.encode(text, { add_special_tokens: special }).ids;
    out.push(ids.join(" "));
  }
  fs.writeSync(1, out.join("\n") + "\n");
}
