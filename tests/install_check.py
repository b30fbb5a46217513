#!/usr/bin/env python3
"""install_check.py: `cmake --install` and `cpack -G DEB` give a desktop app.

- installs into a temporary prefix and checks every file: the binary, the desktop
  entry (desktop-file-validate, and its keys), the AppStream metainfo (appstreamcli
  validate --no-net, and its id, launchable, provides and release), the icons (the
  SVG parses; each PNG's IHDR says the size its folder says) and the manual page
  (man and groff report no warnings);
- the manual page documents every option `mhaviz --help` prints and every key of the
  README's "Using the window" table, and its .TH version is `mhaviz --version`'s;
- builds the .deb with cpack into a temporary folder and checks its control fields
  (Package, Version, Depends from dpkg-shlibdeps plus the fonts, Recommends) and
  that it holds the same files.
A missing tool (desktop-file-validate, appstreamcli, man, groff, dpkg-deb,
dpkg-shlibdeps, file) fails the test: the README's test command installs them.
usage: install_check.py BUILD_DIR SOURCE_DIR [CMAKE [CPACK]]
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

build, source = sys.argv[1:3]
cmake = sys.argv[3] if len(sys.argv) > 3 else "cmake"
cpack = sys.argv[4] if len(sys.argv) > 4 else "cpack"
APP_ID = "io.github.mhaviz.mhaviz"
ICON_SIZES = (16, 32, 48, 64, 128, 256)
failures = 0


def check(ok, what, expected, got):
    global failures
    if not ok:
        failures += 1
        print(f"FAIL {what}: expected {expected}, got {got}")
    return ok


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


# --- the tools, each named with the Debian package that has it ----------------------
TOOLS = {
    "desktop-file-validate": "desktop-file-utils",
    "appstreamcli": "appstream",
    "man": "man-db",
    "groff": "groff-base",
    "dpkg-deb": "dpkg",
    "dpkg-shlibdeps": "dpkg-dev",
    "file": "file",
}
missing = [f"{t} (Debian package {p})" for t, p in TOOLS.items() if not shutil.which(t)]
for tool in (cmake, cpack):
    if not shutil.which(tool):
        missing.append(tool)
if missing:
    print("FAIL missing tools: " + ", ".join(missing) +
          "; install them with apt-get (see the README's Quick start)")
    sys.exit(1)

env = dict(os.environ, LC_ALL="C.UTF-8", MANWIDTH="80", MANPAGER="cat", PAGER="cat")
for k in ("DISPLAY", "WAYLAND_DISPLAY"):
    env.pop(k, None)

FILES = (["bin/mhaviz",
          f"share/applications/{APP_ID}.desktop",
          f"share/metainfo/{APP_ID}.metainfo.xml",
          f"share/icons/hicolor/scalable/apps/{APP_ID}.svg",
          "share/man/man1/mhaviz.1"] +
         [f"share/icons/hicolor/{s}x{s}/apps/{APP_ID}.png" for s in ICON_SIZES])


def roff_text(line):
    """The words of one roff line: macro name, quotes and font escapes gone, \\- as -."""
    line = re.sub(r"^\.[A-Za-z]+\s*", "", line)
    for esc, rep in ((r"\-", "-"), (r"\(mu", "x"), (r"\|", ""), (r"\ ", " "), (r"\~", " "),
                     (r"\fB", ""), (r"\fI", ""), (r"\fR", ""), (r"\fP", ""), ('"', "")):
        line = line.replace(esc, rep)
    return line


def tp_headings(roff_lines, section):
    """The .TP tag lines (roff_text) of one .SH section."""
    out, in_sec = [], False
    for i, line in enumerate(roff_lines):
        if line.startswith(".SH"):
            in_sec = roff_text(line).strip() == section
        elif in_sec and line.startswith(".TP") and i + 1 < len(roff_lines):
            out.append(roff_text(roff_lines[i + 1]))
    return out


def readme_keys():
    """Key names in the first column of the README's "Using the window" table."""
    text = open(os.path.join(source, "README.md"), encoding="utf-8").read()
    sec = text.split("## Using the window", 1)[1]
    table = sec.split("| key | does |", 1)[1].split("\n\n", 1)[0]
    keys = []
    for row in re.findall(r"^\| (.+?) \| .+\|$", table, re.M):
        if row.strip() == "---":
            continue
        for tok in re.split(r"\s*(?:/|,|\bor\b|\s)\s*", row):
            if re.fullmatch(r"(?:Ctrl\+|Shift\+)*(?:[A-Z][A-Za-z0-9]*|[0-9]|[=?-])", tok):
                keys.append(tok)
    return keys


def png_size(path):
    data = open(path, "rb").read(33)
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])


with tempfile.TemporaryDirectory() as tmp:
    prefix = os.path.join(tmp, "prefix")
    r = run([cmake, "--install", build, "--prefix", prefix])
    if not check(r.returncode == 0, "cmake --install exit", 0, f"{r.returncode}: {r.stderr}"):
        sys.exit(1)
    for f in FILES:
        check(os.path.isfile(os.path.join(prefix, f)), f"installed {f}", "a file", "none")
    check(os.access(os.path.join(prefix, "bin/mhaviz"), os.X_OK), "bin/mhaviz", "executable",
          "not executable")
    check(not os.path.exists(os.path.join(prefix, "share/mhaviz/samples.tsv")),
          "share/mhaviz/samples.tsv (the samples are compiled in)", "not installed", "installed")
    if failures:
        print(f"{failures} install check(s) failed; the files' contents were not checked")
        sys.exit(1)
    mhaviz = os.path.join(prefix, "bin/mhaviz")

    # --- what the installed binary says about itself ---
    r = run([mhaviz, "--version"], env=env)
    check(r.returncode == 0 and re.fullmatch(r"mhaviz \d+\.\d+\.\d+\n", r.stdout),
          "mhaviz --version", "exit 0 and 'mhaviz X.Y.Z'", f"{r.returncode} {r.stdout!r}")
    version_line = r.stdout.strip()
    version = version_line.split()[-1]
    r = run([mhaviz, "--help"], env=env)
    check(r.returncode == 0, "mhaviz --help exit", 0, r.returncode)
    help_long = sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z-]*[a-z]", r.stdout)))
    help_short = sorted(set(re.findall(r"^\s+(-[A-Za-z]),", r.stdout, re.M)))
    check(len(help_long) >= 20, "long options found in --help", ">= 20", help_long)

    # --- desktop entry ---
    desktop = os.path.join(prefix, f"share/applications/{APP_ID}.desktop")
    r = run(["desktop-file-validate", desktop], env=env)
    out = r.stdout + r.stderr
    check(r.returncode == 0 and not re.search(r"\b(error|warning):", out),
          "desktop-file-validate", "exit 0, no errors or warnings", f"{r.returncode}: {out}")
    keys = dict(re.findall(r"^([A-Za-z]+)=(.*)$", open(desktop, encoding="utf-8").read(), re.M))
    for k, want in (("Type", "Application"), ("Exec", "mhaviz"), ("Icon", APP_ID),
                    ("Terminal", "false")):
        check(keys.get(k) == want, f"desktop entry {k}", want, keys.get(k))
    cats = keys.get("Categories", "").split(";")
    check("Education" in cats and "Science" in cats, "desktop entry Categories",
          "Education and Science", cats)
    check(len([k for k in keys.get("Keywords", "").split(";") if k]) >= 3,
          "desktop entry Keywords", "at least 3", keys.get("Keywords"))

    # --- AppStream metainfo ---
    metainfo = os.path.join(prefix, f"share/metainfo/{APP_ID}.metainfo.xml")
    r = run(["appstreamcli", "validate", "--no-net", metainfo], env=env)
    check(r.returncode == 0, "appstreamcli validate --no-net", "exit 0",
          f"{r.returncode}: {r.stdout}{r.stderr}")
    try:
        comp = ET.parse(metainfo).getroot()
        check(comp.findtext("id") == APP_ID, "metainfo id", APP_ID, comp.findtext("id"))
        launch = comp.find("launchable")
        check(launch is not None and launch.text == f"{APP_ID}.desktop", "metainfo launchable",
              f"{APP_ID}.desktop", None if launch is None else launch.text)
        check(comp.findtext("provides/binary") == "mhaviz", "metainfo provides binary",
              "mhaviz", comp.findtext("provides/binary"))
        check(comp.findtext("metadata_license") == "CC0-1.0", "metainfo metadata_license",
              "CC0-1.0", comp.findtext("metadata_license"))
        check(comp.findtext("project_license") == "MIT", "metainfo project_license", "MIT",
              comp.findtext("project_license"))
        releases = [x.get("version") for x in comp.findall("releases/release")]
        check(releases[:1] == [version], "metainfo newest release", version, releases)
    except ET.ParseError as e:
        check(False, "metainfo", "well-formed XML", e)

    # --- icons ---
    try:
        svg = ET.parse(os.path.join(prefix, f"share/icons/hicolor/scalable/apps/{APP_ID}.svg"))
        vb = svg.getroot().get("viewBox", "").split()
        check(svg.getroot().tag.endswith("svg") and len(vb) == 4 and vb[2] == vb[3],
              "scalable icon", "an <svg> with a square viewBox", vb)
    except ET.ParseError as e:
        check(False, "scalable icon", "well-formed XML", e)
    for s in ICON_SIZES:
        f = os.path.join(prefix, f"share/icons/hicolor/{s}x{s}/apps/{APP_ID}.png")
        if os.path.isfile(f):
            check(png_size(f) == (s, s), f"{s}x{s} icon IHDR", (s, s), png_size(f))

    # --- manual page ---
    manpage = os.path.join(prefix, "share/man/man1/mhaviz.1")
    r = run(["man", "--warnings", "-l", manpage], env=env)
    check(r.returncode == 0 and r.stderr == "", "man --warnings -l", "exit 0, no warnings",
          f"{r.returncode}: {r.stderr}")
    check("MHAVIZ(1)" in r.stdout and "--heads" in r.stdout, "man -l output",
          "a formatted page", r.stdout[:200])
    long_lines = [line for line in r.stdout.splitlines() if len(line) > 80]
    check(not long_lines, "man -l lines at MANWIDTH=80", "none longer than 80", long_lines)
    r = run(["groff", "-man", "-ww", "-z", manpage], env=env)
    check(r.returncode == 0 and r.stderr == "", "groff -man -ww -z", "exit 0, no warnings",
          f"{r.returncode}: {r.stderr}")
    roff = open(manpage, encoding="utf-8").read().splitlines()
    th = [line for line in roff if line.startswith(".TH ")]
    m = re.fullmatch(r'\.TH MHAVIZ 1 "(\d{4}-\d\d-\d\d)" "([^"]*)" "User Commands"',
                     th[0] if th else "")
    check(m is not None, "man .TH line", '.TH MHAVIZ 1 "YYYY-MM-DD" "mhaviz X.Y.Z" "User Commands"',
          th)
    if m:
        check(m.group(2) == version_line, "man .TH version", version_line, m.group(2))
    option_tags = " ".join(tp_headings(roff, "OPTIONS"))
    for opt in help_long + help_short:
        check(re.search(re.escape(opt) + r"(?![\w-])", option_tags) is not None,
              f"man page OPTIONS documents {opt}", "a .TP entry", "none")
    key_tags = tp_headings(roff, "KEYS")
    check(len(key_tags) >= 15, "man page KEYS entries", ">= 15", len(key_tags))
    key_words = set(w for tag in key_tags for w in re.split(r"[\s,/]+", tag))
    for k in readme_keys():
        check(k in key_words, f"man page KEYS documents {k} (README's window table)",
              "a .TP entry", sorted(key_words))
    sections = [roff_text(line).strip() for line in roff if line.startswith(".SH")]
    for sec in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "KEYS", "EXIT STATUS", "FILES",
                "EXAMPLES"):
        check(sec in sections, f"man page section {sec}", "present", sections)

    # --- the Debian package ---
    pkgdir = os.path.join(tmp, "pkg")
    r = run([cpack, "-G", "DEB", "--config", os.path.join(build, "CPackConfig.cmake"),
             "-B", pkgdir], env=env)
    check(r.returncode == 0, "cpack -G DEB exit", 0, f"{r.returncode}: {r.stdout}{r.stderr}")
    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    deb = os.path.join(pkgdir, f"mhaviz_{version}_{arch}.deb")
    if check(os.path.isfile(deb), "the .deb", deb, os.listdir(pkgdir) if os.path.isdir(pkgdir)
             else "no folder"):
        def field(name):
            return run(["dpkg-deb", "-f", deb, name]).stdout.strip()
        check(field("Package") == "mhaviz", "deb Package", "mhaviz", field("Package"))
        check(field("Version") == version, "deb Version", version, field("Version"))
        check(field("Architecture") == arch, "deb Architecture", arch, field("Architecture"))
        check(field("Section") in ("science", "education"), "deb Section",
              "science or education", field("Section"))
        check(re.search(r"<[^>]+@[^>]+>", field("Maintainer")) is not None, "deb Maintainer",
              "Name <address>", field("Maintainer"))
        depends = [d.strip() for d in field("Depends").split(",")]
        names = [re.split(r"[\s(]", d)[0] for d in depends]
        for want in ("libsdl2-2.0-0", "libsdl2-ttf-2.0-0", "libsdl2-image-2.0-0", "libcairo2",
                     "libfontconfig1", "libc6", "fonts-dejavu-core"):
            check(want in names, f"deb Depends has {want}", want, depends)
        check(any(re.match(r"libopenblas0|libblas3", d) for d in depends),
              "deb Depends has OpenBLAS", "libopenblas0 (or libblas3)", depends)
        check("fonts-droid-fallback" in field("Recommends"), "deb Recommends",
              "fonts-droid-fallback", field("Recommends"))
        listing = run(["dpkg-deb", "-c", deb]).stdout
        paths = set(re.findall(r"\./(\S+)$", listing, re.M))
        for f in FILES:
            f = "usr/" + f
            check(f in paths or (f.endswith(".1") and f + ".gz" in paths), f"deb holds /{f}",
                  "listed", "absent")
        ft = os.path.join(tmp, "x")
        run(["dpkg-deb", "-x", deb, ft])
        r = run(["file", "-b", os.path.join(ft, "usr/bin/mhaviz")])
        check("ELF" in r.stdout and "not stripped" not in r.stdout, "deb's usr/bin/mhaviz",
              "a stripped ELF", r.stdout.strip())

if failures:
    print(f"{failures} install check(s) failed")
    sys.exit(1)
print("install checks passed")
