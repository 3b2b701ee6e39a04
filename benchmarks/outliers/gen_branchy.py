"""Writes branchy.cu (a chain of 1,700 data-dependent branches: about 5,000 basic blocks)
and irreducible.ptx (loops entered at two points, which no structured CUDA produces)."""
from pathlib import Path

HERE = Path(__file__).resolve().parent


def branchy(n: int = 1700) -> str:
    lines = ["// A long chain of data-dependent branches: about 5,000 basic blocks (written by",
             "// gen_branchy.py; the shape of the 5,000-block outlier).",
             "// ptxlint: launch block=128 grid=32 buffer.0=16384 buffer.1=16384",
             'extern "C" __global__ void branchy(const int* __restrict__ in, int* __restrict__ out)',
             "{",
             "    const int i = blockIdx.x * blockDim.x + threadIdx.x;",
             "    int x = in[i], acc = 0;"]
    for k in range(n):
        # the empty asm keeps nvcc from turning each branch into a select
        # a load under each branch keeps nvcc from turning it into a select
        lines.append(f"    if ((x ^ {k * 2654435761 % 1000003}) & {1 << (k % 16)}) "
                     f"acc += in[(i + {k}) & 4095]; else acc ^= {k % 89 + 3};")
    return "\n".join(lines + ["    out[i] = acc;", "}"]) + "\n"


def irreducible(regions: int = 400) -> str:
    """Each region: a two-block loop entered at either block, chosen by the data."""
    body = []
    for k in range(regions):
        body += [f"\tand.b32 \t%r3, %r2, {1 << (k % 31)};",
                 "\tsetp.eq.u32 \t%p1, %r3, 0;",
                 f"\t@%p1 bra \t$A{k};",
                 f"\tbra.uni \t$B{k};",
                 f"$A{k}:",
                 f"\tadd.s32 \t%r4, %r4, {k + 1};",
                 f"$B{k}:",
                 "\tadd.s32 \t%r5, %r5, 1;",
                 "\tand.b32 \t%r6, %r5, 7;",
                 "\tsetp.ne.u32 \t%p2, %r6, 0;",
                 f"\t@%p2 bra \t$A{k};"]
    head = ["// Loops entered at two points (irreducible control flow), 400 of them in a row",
            "// (written by gen_branchy.py).",
            "// ptxlint: launch block=128 grid=32 buffer.0=16384 buffer.1=16384",
            ".version 8.0", ".target sm_80", ".address_size 64", "",
            ".visible .entry irreducible(.param .u64 in, .param .u64 out)", "{",
            "\t.reg .pred \t%p<3>;", "\t.reg .b32 \t%r<8>;", "\t.reg .b64 \t%rd<8>;",
            "\tld.param.u64 \t%rd1, [in];", "\tld.param.u64 \t%rd2, [out];",
            "\tcvta.to.global.u64 \t%rd3, %rd1;", "\tcvta.to.global.u64 \t%rd4, %rd2;",
            "\tmov.u32 \t%r1, %tid.x;", "\tmul.wide.u32 \t%rd5, %r1, 4;",
            "\tadd.s64 \t%rd6, %rd3, %rd5;", "\tld.global.u32 \t%r2, [%rd6];",
            "\tmov.u32 \t%r4, 0;", "\tmov.u32 \t%r5, 0;"]
    tail = ["\tadd.s64 \t%rd7, %rd4, %rd5;", "\tst.global.u32 \t[%rd7], %r4;", "\tret;", "}"]
    return "\n".join(head + body + tail) + "\n"


if __name__ == "__main__":
    (HERE / "branchy.cu").write_text(branchy())
    (HERE / "irreducible.ptx").write_text(irreducible())
