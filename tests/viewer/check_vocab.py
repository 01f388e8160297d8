#!/usr/bin/env python3
"""check_vocab.py — the viewer's vocabularies that cross the C/JavaScript
border, or repeat between viewer files, are defined once (CTest viewer_vocab;
docs/viewer.md §The app (viewer/)):
  - the frames table's flags: viewer/data.js FRAME_FLAG holds exactly the
    FF_* enum of src/viewer/viewer_model.c, name for name (FF_OP is OP) and
    bit for bit, and no viewer file tests a frame's flags with a bare number;
  - the bar layout: only viewer/bars.js defines STRIDE and the words of a bar
    (WORD), and no viewer file reads or writes a bar's word by a bare offset;
    the layout is the one gl.js's shader reads (STRIDE 8, the rect in words
    0-3, colour and flags in words 4-7, each word once), checked here as
    glslBarFields checks it in the browser, so a change fails in make test
    and not on a user's screen; and no viewer file tests a frame's or a
    bar's flags with a bare number (FRAME_FLAG, bars.js FLAG). The bar
    layout has no C side: bars are built in the browser from the spans
    table, whose columns the model's meta names.

Must never: change a file. Exit status 0 when they hold, 1 otherwise (each
finding printed), 2 when a definition cannot be found.

Usage: check_vocab.py --root DIR
"""
import argparse
import glob
import os
import re
import sys


def c_flags(root):
    text = open(os.path.join(root, "src", "viewer", "viewer_model.c"), encoding="utf-8").read()
    m = re.search(r"enum\s*\{\s*(FF_\w+\s*=\s*\d+(?:\s*,\s*FF_\w+\s*=\s*\d+)*)\s*\}", text)
    return {n[3:]: int(v) for n, v in re.findall(r"(FF_\w+)\s*=\s*(\d+)", m.group(1))} if m else None


def js_object(path, name):
    text = open(path, encoding="utf-8").read()
    m = re.search(r"export const " + name + r" = Object\.freeze\(\{(.*?)\}\);", text, re.S)
    if not m:
        return None
    body = re.sub(r"//[^\n]*", "", m.group(1))
    return {k: int(v) for k, v in re.findall(r"(\w+):\s*(\d+)", body)}


def js_const(path, name):
    m = re.search(r"export const " + name + r"\s*=\s*(\d+)\s*;", open(path, encoding="utf-8").read())
    return int(m.group(1)) if m else None


def layout_problems(stride, word):
    """What in bars.js's layout the shader (gl.js, glslBarFields) cannot read."""
    problems = []
    if stride != 8:
        problems.append(f"bars.js STRIDE is {stride}: the shader reads a bar as two texels of 4 words (8)")
    for i, name in enumerate(("X", "Y", "W", "H")):
        if word.get(name) != i:
            problems.append(f"bars.js WORD.{name} is {word.get(name)}: the shader reads the rect from words 0-3")
    for name in ("COLOR", "FLAGS"):
        if not (isinstance(word.get(name), int) and 4 <= word[name] < 8):
            problems.append(f"bars.js WORD.{name} is {word.get(name)}: the shader reads it from words 4-7")
    if len(set(word.values())) != len(word):
        problems.append(f"bars.js WORD gives two fields one word: {word}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True)
    root = os.path.abspath(ap.parse_args().root)
    viewer = os.path.join(root, "viewer")
    c, js = c_flags(root), js_object(os.path.join(viewer, "data.js"), "FRAME_FLAG")
    word = js_object(os.path.join(viewer, "bars.js"), "WORD")
    stride = js_const(os.path.join(viewer, "bars.js"), "STRIDE")
    if not c or not js or not word or stride is None:
        print("check_vocab: no FF_* enum in src/viewer/viewer_model.c, FRAME_FLAG in viewer/data.js or WORD or "
              "STRIDE in viewer/bars.js")
        return 2
    problems = layout_problems(stride, word)
    for n in sorted(set(c) | set(js)):
        if c.get(n) != js.get(n):
            problems.append(f"frame flag {n}: FF_{n} = {c.get(n)} in src/viewer/viewer_model.c, "
                            f"FRAME_FLAG.{n} = {js.get(n)} in viewer/data.js")
    for path in sorted(glob.glob(os.path.join(viewer, "*.js"))):
        rel = os.path.relpath(path, root)
        for i, line in enumerate(open(path, encoding="utf-8"), 1):
            code = line.split("//")[0]
            if re.search(r"\.flags\[[^\]]+\]\s*&\s*\d", code):
                problems.append(f"{rel}:{i}: tests a frame's flags with a bare number: use FRAME_FLAG (data.js)")
            if re.search(r"\b\w*flags\s*&\s*\(?\s*\d", code, re.I):
                problems.append(f"{rel}:{i}: tests flags with a bare number: use FRAME_FLAG (data.js) or FLAG (bars.js)")
            if rel != os.path.join("viewer", "bars.js") and re.search(r"\b(?:export )?const STRIDE\s*=", code):
                problems.append(f"{rel}:{i}: defines STRIDE: the bar layout is bars.js's")
            if re.search(r"\b(?:inst|instU|f|f32|u32)\[\s*(?:o|\w+ \* (?:FLOATS|STRIDE))\s*(?:\+\s*\d+\s*)?\]", code):
                problems.append(f"{rel}:{i}: reads or writes a bar's word by a bare offset: use WORD (bars.js)")
    for p in problems:
        print(f"VOCAB {p}")
    if problems:
        print(f"check_vocab: {len(problems)} finding(s)")
        return 1
    print(f"check_vocab: {len(c)} frame flags agree (viewer_model.c, data.js); the bar layout's {len(word)} words "
          f"of {stride} are bars.js's alone and the shader's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
