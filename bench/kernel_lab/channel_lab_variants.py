"""Writes channel_lab_variants.h: the kernel instantiations of channel_lab.cu (the
preprocessor cannot loop over them). Run from this directory: python3 channel_lab_variants.py"""


def elem(eb):
    return "unsigned char" if eb == 1 else "unsigned short"


def words(name, eb, ch, split, threads=None, stage=None):
    s = f"#define CW_NAME {name}\n#define ELEM {elem(eb)}\n#define EB {eb}\n#define CH {ch}\n#define SPLIT {split}\n"
    if threads:
        s += f"#define CW_THREADS {threads}\n"
    if stage is not None:
        s += f"#define CW_STAGE {stage}\n"
    return s + '#include "channel_words_variant.h"\n'


def tiles(name, eb, ch, split):
    return (f"#define RK_NAME {name}\n#define ELEM {elem(eb)}\n#define EB {eb}\n#define CH {ch}\n"
            f"#define SPLIT {split}\n#include \"channel_runs_variant.h\"\n")


blocks, rows = [], []
for split in (1, 0):
    for eb in (1, 2):
        for ch in (2, 3, 4):
            n = f"cw_e_{split}_{eb}_{ch}"
            blocks.append(words(n, eb, ch, split))
            rows.append(('"engine: staged, 256"', eb, ch, split, 256, 0, n))
for split in (1, 0):
    for ch in (3, 4):
        n = f"cw_d_{split}_{ch}"
        blocks.append(words(n, 1, ch, split, stage=0))
        rows.append(('"direct, 256"', 1, ch, split, 256, 0, n))
        n = f"cw_t_{split}_{ch}"
        blocks.append(words(n, 1, ch, split, threads=128))
        rows.append(('"staged, 128"', 1, ch, split, 128, 0, n))
for split in (1, 0):
    for eb, ch in ((1, 3), (1, 4), (2, 3)):
        n = f"rk_{split}_{eb}_{ch}"
        blocks.append(tiles(n, eb, ch, split))
        rows.append(('"earlier tiles (channel_runs)"', eb, ch, split, 256, 1, n))
with open("channel_lab_variants.h", "w") as f:
    f.write("// Written by channel_lab_variants.py: the kernel instantiations of channel_lab.cu.\n")
    f.write("\n".join(blocks))
    f.write("\nstatic const Variant variants[] = {\n")
    f.write("".join(f"    {{{r[0]}, {r[1]}, {r[2]}, {r[3]}, {r[4]}, {r[5]}, ns_{r[6]}::{r[6]}}},\n" for r in rows))
    f.write("};\n")
