"""Launch configurations: parsing, resolution against a kernel, block limits, and the
abstract state a kernel starts from (special registers and parameter cells)."""
from __future__ import annotations

import struct

import pytest

from ptxlint.domains.space import Region
from ptxlint.domains.strided import StridedInterval as SI
from ptxlint.ir.build import parse_module
from ptxlint.launch import LaunchConfig, block_or_limits, initial_state, parse_dims

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
PARAMS = (".param .u64 .ptr.global.align 16 in, .param .u64 out, .param .u32 n, "
          ".param .s32 delta, .param .f32 alpha, .param .u8 c, .param .align 8 .b8 s[16]")
READS = "\n".join(f"\tmov.u32 %r{i}, {r};" for i, r in enumerate(
    ("%tid.x", "%tid.y", "%ntid.x", "%ctaid.x", "%nctaid.x", "%laneid", "%lanemask_lt",
     "%clock", "%dynamic_smem_size", "%warpid")))


def kernel(directives: str = "", params: str = PARAMS, body: str = READS, kind: str = "entry"):
    src = (HEAD + f".visible .{kind} k({params})\n{directives}\n{{\n\t.reg .b32 %r<16>;\n"
           + body + "\n\tret;\n}\n")
    result = parse_module(src)
    assert result.diagnostics == [], [d.message for d in result.diagnostics]
    return result.module, result.module.functions[0]


# ---- parsing ------------------------------------------------------------------------------
@pytest.mark.parametrize("text, dims", [("32,8", (32, 8, 1)), ("256", (256, 1, 1)),
                                        ("16x16x4", (16, 16, 4)), (" 8, 4, 2 ", (8, 4, 2))])
def test_parse_dims(text, dims):
    assert parse_dims(text) == dims


@pytest.mark.parametrize("text", ["", "0,4", "1,2,3,4", "a,b", "-1"])
def test_parse_dims_rejects(text):
    with pytest.raises(ValueError, match="1 to 3 positive integers"):
        parse_dims(text)


@pytest.mark.parametrize("kw, message", [
    ({"block": (2048, 1, 1)}, "block.x = 2048"),
    ({"block": (32, 32, 2)}, "more than 1024 threads"),
    ({"block": (1, 1, 65)}, "block.z = 65"),
    ({"grid": (1, 70000, 1)}, "grid.y = 70000"),
    ({"dynamic_smem": -1}, "negative"),
])
def test_invalid_launch(kw, message):
    with pytest.raises(ValueError, match=message):
        LaunchConfig(**kw)


def test_parse_spec_and_short_dims():
    cfg = LaunchConfig.parse("block=32,8 grid=64 smem=0x100 param.n=1024 buffer.in=4096 "
                             "param.4=2.5")
    assert cfg.block == (32, 8, 1) and cfg.grid == (64, 1, 1) and cfg.dynamic_smem == 256
    assert cfg.params == {"n": 1024, 4: 2.5} and cfg.extents == {"in": 4096}
    assert LaunchConfig(block=(64,)).block == (64, 1, 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown launch setting 'blocks'"):
        LaunchConfig.parse("blocks=32")


# ---- resolution -----------------------------------------------------------------------------
def test_resolved_names_parameters():
    _, fn = kernel()
    cfg = LaunchConfig(params={2: 100, "delta": -3}, extents={0: 4096, "out": 64}).resolved(fn)
    assert cfg.params == {"n": 100, "delta": -3}
    assert cfg.extents == {"in": 4096, "out": 64}


@pytest.mark.parametrize("kw, message", [
    ({"params": {"m": 1}}, r"no parameter named 'm' \(parameters: in, out, n, delta"),
    ({"params": {9: 1}}, "has 7 parameters: index 9 is out of range"),
    ({"params": {"n": 1, 2: 2}}, "given twice"),
    ({"params": {"c": 300}}, r"does not fit parameter 'c' \(.u8\)"),
    ({"params": {"n": 1.5}}, "takes an integer"),
    ({"params": {"s": 0}}, "aggregate"),
    ({"extents": {"alpha": 16}}, "cannot be a pointer"),
    ({"extents": {-1: 16}}, "index -1 is out of range"),
])
def test_resolved_errors(kw, message):
    _, fn = kernel()
    with pytest.raises(ValueError, match=message):
        LaunchConfig(**kw).resolved(fn)


# ---- block shape ------------------------------------------------------------------------------
def test_block_sources():
    _, plain = kernel()
    assert LaunchConfig(block=(32, 8, 1)).block_or_limits(plain).shape == (32, 8, 1)
    hw = block_or_limits(plain)
    assert (hw.dims, hw.threads, hw.exact, hw.source) == ((1024, 1024, 64), 1024, False,
                                                          "hardware")
    _, req = kernel(".reqntid 128, 2")
    lim = block_or_limits(req)
    assert lim.shape == (128, 2, 1) and lim.source == "reqntid"
    # __launch_bounds__(256) bounds the product, so a 16x16 block is allowed
    _, top = kernel(".maxntid 256, 1, 1")
    lim = block_or_limits(top)
    assert (lim.dims, lim.threads, lim.exact) == ((256, 256, 64), 256, False)


def test_thread_bounds():
    _, fn = kernel()
    b = LaunchConfig(block=(48, 1, 1)).thread_bounds(fn)
    assert b.tid_x == SI.range(0, 47) and b.tid_y == SI.const(0) and b.laneid == SI.range(0, 31)
    b = LaunchConfig(block=(8, 2, 1)).thread_bounds(fn)
    assert b.laneid == SI.range(0, 15)
    b = LaunchConfig().thread_bounds(kernel(".maxntid 16")[1])
    assert b.tid_x == SI.range(0, 15) and b.tid_z == SI.range(0, 15)
    assert b.laneid == SI.range(0, 15)


# ---- initial state: special registers ------------------------------------------------------
def test_special_registers_with_launch():
    module, fn = kernel()
    s = initial_state(fn, module, LaunchConfig(block=(64, 2, 1), grid=(10, 1, 1),
                                               dynamic_smem=512))
    tid = s["%tid.x"]
    assert not tid.is_uniform and tid.aff.stride_of("tid.x") == 1
    assert tid.si == SI.range(0, 63)
    # 64 threads per row: every warp lies in one row, so tid.y is warp-uniform
    assert s["%tid.y"].si == SI.range(0, 1) and s["%tid.y"].is_uniform
    narrow = initial_state(fn, module, LaunchConfig(block=(16, 16, 1)))
    assert not narrow["%tid.y"].is_uniform and narrow["%tid.y"].aff.stride_of("tid.y") == 1
    assert s["%ntid.x"].singleton() == 64 and s["%ntid.x"].is_uniform
    assert s["%ctaid.x"].is_uniform and s["%ctaid.x"].si == SI.range(0, 9)
    assert s["%nctaid.x"].singleton() == 10
    assert s["%laneid"].aff.stride_of("laneid") == 1 and s["%laneid"].si == SI.range(0, 31)
    assert not s["%lanemask_lt"].is_uniform and s["%lanemask_lt"].si.contains(0b111)
    assert s["%clock"].is_top
    assert s["%dynamic_smem_size"].singleton() == 512
    assert s["%warpid"].is_uniform and not s["%warpid"].si.is_singleton
    assert "%tid.z" not in s.regs  # only what the module reads


def test_special_registers_without_launch():
    module, fn = kernel(".reqntid 128")
    s = initial_state(fn, module, None)
    assert s["%ntid.x"].singleton() == 128  # .reqntid is exact
    assert s["%tid.x"].si == SI.range(0, 127)
    assert s["%ctaid.x"].is_uniform and s["%ctaid.x"].si == SI.range(0, 2**31 - 2)
    assert s["%nctaid.x"].is_uniform and s["%nctaid.x"].si.lo == 1
    assert s["%dynamic_smem_size"].is_uniform and s["%dynamic_smem_size"].singleton() is None
    module, fn = kernel()
    ntid = initial_state(fn, module)["%ntid.x"]
    assert ntid.is_uniform and ntid.si == SI.range(1, 1024)


def test_single_thread_block_makes_lane_registers_constant():
    module, fn = kernel()
    s = initial_state(fn, module, LaunchConfig(block=(1, 1, 1)))
    assert s["%tid.x"].singleton() == 0 and s["%tid.x"].is_uniform
    assert s["%lanemask_lt"].singleton() == 0


# ---- initial state: parameters ---------------------------------------------------------------
def test_parameter_cells():
    module, fn = kernel()
    s = initial_state(fn, module, LaunchConfig(params={"n": 1000, "alpha": 1.5, "c": 255}))
    assert s.params[("n", 0)].singleton() == 1000
    assert s.params[("alpha", 0)].singleton() == struct.unpack("<I", struct.pack("<f", 1.5))[0]
    assert s.params[("c", 0)].singleton() == 255
    inp = s.params[("in", 0)]  # .ptr attribute
    assert inp.region == Region("global", "in", generic=True) and inp.singleton() == 0
    out = s.params[("out", 0)]  # 64-bit integer without a value: a pointer
    assert out.region == Region("global", "out", generic=True) and out.is_uniform
    delta = s.params[("delta", 0)]
    assert delta.is_uniform and delta.si == SI.full(32, True) and delta.region is None
    assert ("s", 0) not in s.params  # aggregate: loads from it are uniform, see memory tests


def test_given_pointer_value_and_32_bit_pointer_by_extent():
    module, fn = kernel(params=".param .u64 p, .param .u32 q")
    s = initial_state(fn, module, LaunchConfig(params={"p": 0}, extents={"q": 64}))
    assert s.params[("p", 0)].singleton() == 0 and s.params[("p", 0)].region is None
    assert s.params[("q", 0)].region == Region("global", "q", generic=True)


def test_device_function_has_no_parameter_cells():
    module, fn = kernel(kind="func", params=".param .u64 p")
    assert initial_state(fn, module).params == {}


def test_initial_state_reports_bad_launch():
    module, fn = kernel()
    with pytest.raises(ValueError, match="no parameter named 'x'"):
        initial_state(fn, module, LaunchConfig(params={"x": 1}))
