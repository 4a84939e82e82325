"""Writes small_lab_variants.h: the kernel instantiations of small_lab.cu (the preprocessor
cannot loop over them). Run from this directory: python3 small_lab_variants.py"""

TIMED = [(16, 16), (32, 8), (8, 32), (4, 64), (64, 4), (16, 32), (3, 100), (24, 20)]
CHECKED = [(2, 2), (3, 5), (17, 13), (31, 16), (5, 100), (2, 256), (256, 2)]
UNDEF = ["small_words", "NA", "NL", "MAT", "PA", "WM", "RUNW", "SW", "SW_WARPS"]
UNDEF_TILES = ["small_matrices", "NA", "NL", "EB", "ELEM", "K", "MAT", "NB", "BYTES"]


def block(name, na, nl, defines, kernel, source, undef):
    head = f"#define NA {na}\n#define NL {nl}\n{defines}#define {kernel} {name}\n"
    body = f"namespace ns_{name} {{\n#include \"../../crates/stridekit/src/copy/kernels/{source}\"\n}}\n"
    return head + body + "".join(f"#undef {u}\n" for u in undef)


blocks, rows = [], []
for na, nl in sorted(set(TIMED + CHECKED)):
    configs = [("e", "", "engine: small_words, 8 warps", 256)]
    if (na, nl) in TIMED:
        configs.append(("w4", "#define SW_WARPS 4\n", "small_words, 4 warps", 128))
    for tag, defines, label, threads in configs:
        name = f"sw_{tag}_{na}_{nl}"
        blocks.append(block(name, na, nl, defines, "small_words", "small_words.cu", UNDEF))
        rows.append(f'    {{"{label}", {na}, {nl}, {threads}, 0, ns_{name}::{name}}},\n')
    if (na, nl) in TIMED:
        name = f"sm_{na}_{nl}"
        defines = "#define EB 4\n#define ELEM unsigned int\n"
        blocks.append(block(name, na, nl, defines, "small_matrices", "small_matrices.cu", UNDEF_TILES))
        rows.append(f'    {{"small_matrices (8 KiB tiles, EB 4)", {na}, {nl}, 256, 1, ns_{name}::{name}}},\n')
with open("small_lab_variants.h", "w") as f:
    f.write("// Written by small_lab_variants.py: the kernel instantiations of small_lab.cu.\n")
    f.write("\n".join(blocks))
    f.write("\nstatic const Variant variants[] = {\n" + "".join(rows) + "};\n")
