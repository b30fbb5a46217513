"""markup_check.py: the caption markup (src/view/markup.c) against a reference written
here from the README's rules, on hand-picked and 20000 random strings over the markup's
own characters: every string is either broken in both, at the same column (characters on
its line), or gives the same runs (text, level, bold). Usage: markup_check.py DRIVER"""
import random
import subprocess
import sys

IDENT = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
ESC = set("_^{}*\\")


class Broken(Exception):
    def __init__(self, pos):
        self.pos = pos


def reference(s):
    """Runs [(text, level, bold)] or raises Broken(index of the character at fault)."""
    runs = []  # [text, level, bold, open]
    bold = [False]
    bold_at = [0]

    def cut():
        if runs:
            runs[-1][3] = False

    def put(ch, level):
        if runs and runs[-1][3] and runs[-1][1] == level and runs[-1][2] == bold[0]:
            runs[-1][0] += ch
        else:
            runs.append([ch, level, bold[0], True])

    def plain(ch):  # level 0: spaces are runs of their own
        if ch in " \t":
            cut()
            runs.append([" ", 0, bold[0], False])
        else:
            put(ch, 0)

    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            if i + 1 >= len(s) or s[i + 1] not in ESC:
                raise Broken(i)
            plain(s[i + 1])
            i += 2
        elif c in "_^":
            level = 1 if c == "^" else -1
            cut()
            j = i + 1
            if j < len(s) and s[j] == "{":
                k = j + 1
                count = 0
                while True:
                    if k >= len(s) or s[k] == "\n":
                        raise Broken(j)
                    d = s[k]
                    if d == "}":
                        break
                    if d == "{":
                        raise Broken(k)
                    if d == "\\":
                        if k + 1 >= len(s) or s[k + 1] not in ESC:
                            raise Broken(k)
                        # an escape in a group: put_char, i.e. a space would split; none is
                        put(s[k + 1], level)
                        k += 2
                    elif d == "*":
                        bold[0] = not bold[0]
                        if bold[0]:
                            bold_at[0] = k
                        cut()
                        k += 1
                    else:
                        put(d, level)
                        k += 1
                    count += 1
                if count == 0:
                    raise Broken(j)
                j = k + 1
            elif c == "^" and j + 1 < len(s) and s[j] == "-" and s[j + 1].isdigit() and s[j + 1] in IDENT:
                put("\u2212", level)
                j += 1
                while j < len(s) and s[j] in "0123456789":
                    put(s[j], level)
                    j += 1
            elif j < len(s) and s[j] in IDENT:
                while j < len(s) and s[j] in IDENT:
                    put(s[j], level)
                    j += 1
            else:
                raise Broken(i)
            cut()
            i = j
        elif c == "{" or c == "}":
            raise Broken(i)
        elif c == "*":
            bold[0] = not bold[0]
            if bold[0]:
                bold_at[0] = i
            cut()
            i += 1
        elif c == "\n":
            cut()
            runs.append(["\n", 0, bold[0], False])
            i += 1
        else:
            plain(c)
            i += 1
    if bold[0]:
        raise Broken(bold_at[0])
    return [(t, l, int(b)) for t, l, b, _ in runs]


def column(s, pos):
    line_start = s.rfind("\n", 0, pos) + 1
    return pos - line_start + 1


def expected(s):
    try:
        return ("R", reference(s))
    except Broken as e:
        return ("E", column(s, e.pos))


def main():
    driver = sys.argv[1]
    rng = random.Random(18)
    cases = [
        "W_i^Q", "\u221ad_k", "\u211d^{n\u00d7d_model}", "d_model", "K^T W^-1", "x_{i,j}^2",
        "a\\_b \\^ \\{x\\} \\\\ \\*", "*one head* wins", "x_", "x^", "{a}", "a}", "x^{a",
        "x^{}", "x^{a{b}}", "*bold", "ab\\", "\\q", "x_{a\nb}", "x^{*a}", "\u221a\u211d_",
        "fine line\n\u00e9\u00e9 ^", "two  spaces\tand a tab", "",
    ]
    alphabet = list("ab1_^{}*\\ -\n") + ["\u221a", "\u211d", "\u00d7", "T", "Q", "9"]
    for _ in range(20000):
        n = rng.randint(0, 14)
        cases.append("".join(rng.choice(alphabet) for _ in range(n)))
    inp = "".join(c.encode().hex() + "\n" for c in cases)
    out = subprocess.run([driver], input=inp.encode(), capture_output=True, check=True).stdout
    lines = out.decode().split("\n")
    li = 0
    bad = 0
    for c in cases:
        head = lines[li].split()
        li += 1
        if head[0] == "E":
            got = ("E", int(head[1]))
        elif head[0] == "R":
            runs = []
            for _ in range(int(head[1])):
                lv, bd, hx = (lines[li].split(" ") + [""])[:3]
                runs.append((bytes.fromhex(hx).decode(), int(lv), int(bd)))
                li += 1
            got = ("R", runs)
        else:
            got = ("X", lines[li - 1])
        want = expected(c)
        if got != want:
            bad += 1
            if bad <= 10:
                print(f"{c!r}: expected {want}, got {got}")
    broken = sum(1 for c in cases if expected(c)[0] == "E")
    print(f"markup: {len(cases)} strings ({broken} broken), {bad} differ")
    sys.exit(1 if bad else 0)


main()
