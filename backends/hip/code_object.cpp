#include "backends/hip/code_object.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>

namespace kevolve::hip {
namespace {

using R = Expected<std::vector<GpuResources>>;

// A decoded msgpack value: only what the metadata uses (maps, arrays, strings, integers, booleans).
struct Msg {
  enum Kind { nil, boolean, integer, real, string, array, map } kind = nil;
  int64_t i = 0;
  std::string s;
  std::vector<Msg> items;                  // array
  std::vector<std::pair<Msg, Msg>> pairs;  // map
  const Msg* get(std::string_view key) const {
    for (auto& [k, v] : pairs)
      if (k.kind == string && k.s == key) return &v;
    return nullptr;
  }
  int64_t num(std::string_view key) const {
    const Msg* v = get(key);
    return v && (v->kind == integer || v->kind == boolean) ? v->i : 0;
  }
};

class MsgReader {
 public:
  explicit MsgReader(std::string_view b) : b_(b) {}
  // Decodes one value at the cursor; false (and error()) on truncated or unsupported input.
  bool read(Msg& m, int depth = 0) {
    if (depth > 32) return fail("nested too deeply");
    uint8_t c = 0;
    if (!byte(c)) return false;
    if (c <= 0x7f) return integer(m, c);
    if (c >= 0xe0) return integer(m, static_cast<int8_t>(c));
    if ((c & 0xf0) == 0x80) return map(m, c & 0x0f, depth);
    if ((c & 0xf0) == 0x90) return array(m, c & 0x0f, depth);
    if ((c & 0xe0) == 0xa0) return str(m, c & 0x1f);
    uint64_t n = 0;
    switch (c) {
      case 0xc0:
        m.kind = Msg::nil;
        return true;
      case 0xc2:
      case 0xc3:
        m.kind = Msg::boolean;
        m.i = c == 0xc3;
        return true;
      case 0xcc:
        return be(1, n) && integer(m, static_cast<int64_t>(n));
      case 0xcd:
        return be(2, n) && integer(m, static_cast<int64_t>(n));
      case 0xce:
        return be(4, n) && integer(m, static_cast<int64_t>(n));
      case 0xcf:
        return be(8, n) && integer(m, static_cast<int64_t>(n));
      case 0xd0:
        return be(1, n) && integer(m, static_cast<int8_t>(n));
      case 0xd1:
        return be(2, n) && integer(m, static_cast<int16_t>(n));
      case 0xd2:
        return be(4, n) && integer(m, static_cast<int32_t>(n));
      case 0xd3:
        return be(8, n) && integer(m, static_cast<int64_t>(n));
      case 0xca:
        m.kind = Msg::real;
        return skip(4);
      case 0xcb:
        m.kind = Msg::real;
        return skip(8);
      case 0xd9:
      case 0xc4:
        return be(1, n) && str(m, n);
      case 0xda:
      case 0xc5:
        return be(2, n) && str(m, n);
      case 0xdb:
      case 0xc6:
        return be(4, n) && str(m, n);
      case 0xdc:
        return be(2, n) && array(m, n, depth);
      case 0xdd:
        return be(4, n) && array(m, n, depth);
      case 0xde:
        return be(2, n) && map(m, n, depth);
      case 0xdf:
        return be(4, n) && map(m, n, depth);
      default:
        return fail("unsupported msgpack type 0x" + hex(c));
    }
  }
  const std::string& error() const { return error_; }

 private:
  static std::string hex(uint8_t c) {
    const char* d = "0123456789abcdef";
    return {d[c >> 4], d[c & 15]};
  }
  bool fail(std::string e) {
    if (error_.empty()) error_ = std::move(e) + " at byte " + std::to_string(at_);
    return false;
  }
  bool byte(uint8_t& c) {
    if (at_ >= b_.size()) return fail("truncated");
    c = static_cast<uint8_t>(b_[at_++]);
    return true;
  }
  bool be(int n, uint64_t& v) {
    v = 0;
    for (int k = 0; k < n; ++k) {
      uint8_t c = 0;
      if (!byte(c)) return false;
      v = v << 8 | c;
    }
    return true;
  }
  bool skip(uint64_t n) {
    if (b_.size() - at_ < n) return fail("truncated");
    at_ += n;
    return true;
  }
  bool integer(Msg& m, int64_t v) {
    m.kind = Msg::integer;
    m.i = v;
    return true;
  }
  bool str(Msg& m, uint64_t n) {
    if (b_.size() - at_ < n) return fail("truncated string");
    m.kind = Msg::string;
    m.s.assign(b_.substr(at_, n));
    at_ += n;
    return true;
  }
  bool array(Msg& m, uint64_t n, int depth) {
    if (n > b_.size() - at_) return fail("array longer than its input");
    m.kind = Msg::array;
    m.items.resize(n);
    for (auto& x : m.items)
      if (!read(x, depth + 1)) return false;
    return true;
  }
  bool map(Msg& m, uint64_t n, int depth) {
    if (n > b_.size() - at_) return fail("map longer than its input");
    m.kind = Msg::map;
    m.pairs.resize(n);
    for (auto& [k, v] : m.pairs)
      if (!read(k, depth + 1) || !read(v, depth + 1)) return false;
    return true;
  }
  std::string_view b_;
  size_t at_ = 0;
  std::string error_;
};

template <class T>
bool load(std::string_view b, uint64_t at, T& v) {
  if (at > b.size() || b.size() - at < sizeof(T)) return false;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return true;
}

uint64_t align4(uint64_t n) { return (n + 3) & ~uint64_t{3}; }

// The ELF inside a clang offload bundle (the first amdgcn entry), or b itself.
Expected<std::string_view> unbundle(std::string_view b) {
  using E = Expected<std::string_view>;
  static constexpr std::string_view kMagic = "__CLANG_OFFLOAD_BUNDLE__";
  if (b.substr(0, kMagic.size()) != kMagic) return b;
  uint64_t n = 0, at = kMagic.size();
  if (!load(b, at, n)) return E::failure("offload bundle: truncated header");
  at += 8;
  for (uint64_t k = 0; k < n && k < 1024; ++k) {
    uint64_t off = 0, size = 0, idlen = 0;
    if (!load(b, at, off) || !load(b, at + 8, size) || !load(b, at + 16, idlen) || b.size() - (at + 24) < idlen)
      return E::failure("offload bundle: truncated entry " + std::to_string(k));
    const std::string_view id = b.substr(at + 24, idlen);
    at += 24 + idlen;
    if (id.find("amdgcn") != std::string_view::npos && size > 0) {
      if (off > b.size() || b.size() - off < size)
        return E::failure("offload bundle: entry '" + std::string(id) + "' out of range");
      return b.substr(off, size);
    }
  }
  return E::failure("offload bundle: no amdgcn code object in it");
}

// The msgpack text of the NT_AMDGPU_METADATA note of an ELF64 code object.
Expected<std::string_view> metadata_note(std::string_view e) {
  using E = Expected<std::string_view>;
  if (e.size() < 64 || e.substr(0, 4) !=
                           "\x7f"
                           "ELF")
    return E::failure("not an ELF file");
  if (e[4] != 2 || e[5] != 1) return E::failure("not a little-endian ELF64 file");
  uint16_t machine = 0, shentsize = 0, shnum = 0;
  uint64_t shoff = 0;
  load(e, 18, machine);
  load(e, 0x28, shoff);
  load(e, 0x3a, shentsize);
  load(e, 0x3c, shnum);
  if (machine != 224) return E::failure("ELF machine " + std::to_string(machine) + " is not AMDGPU (224)");
  if (shentsize < 64) return E::failure("bad section header size");
  for (uint16_t s = 0; s < shnum; ++s) {
    const uint64_t h = shoff + uint64_t{s} * shentsize;
    uint32_t type = 0;
    uint64_t off = 0, size = 0;
    if (!load(e, h + 4, type) || !load(e, h + 24, off) || !load(e, h + 32, size))
      return E::failure("section header " + std::to_string(s) + " out of range");
    if (type != 7) continue;  // SHT_NOTE
    if (off > e.size() || e.size() - off < size) return E::failure("note section out of range");
    for (uint64_t p = off; p + 12 <= off + size;) {
      uint32_t namesz = 0, descsz = 0, ntype = 0;
      load(e, p, namesz);
      load(e, p + 4, descsz);
      load(e, p + 8, ntype);
      const uint64_t name_at = p + 12, desc_at = name_at + align4(namesz);
      if (desc_at > off + size || off + size - desc_at < descsz) return E::failure("note out of its section");
      const std::string_view name = e.substr(name_at, namesz);
      if (ntype == 32 && name.substr(0, 6) == "AMDGPU") return e.substr(desc_at, descsz);
      p = desc_at + align4(descsz);
    }
  }
  return E::failure("no NT_AMDGPU_METADATA note (code object v2, or not a kernel image)");
}

int64_t round_up(int64_t n, int64_t g) { return g <= 1 ? n : (n + g - 1) / g * g; }

}  // namespace

Expected<TargetLimits> target_limits(std::string_view arch) {
  const std::string a(arch.substr(0, arch.find(':')));
  TargetLimits t;
  t.arch = a;
  if (a == "gfx908") {  // CDNA1: 256 arch VGPRs + 256 AGPRs per lane, 10 waves per SIMD
    t.max_waves_per_simd = 10;
    t.vgprs_per_simd = 256;
    t.vgpr_granule = 4;
  } else if (a == "gfx90a" || a == "gfx940" || a == "gfx941" || a == "gfx942") {  // CDNA2/3: unified 512
  } else if (a.rfind("gfx103", 0) == 0) {  // RDNA2, wave32, WGP mode: 4 SIMD32 share 128 KiB of LDS
    t.wave_size = 32;
    t.max_waves_per_simd = 16;
    t.vgprs_per_simd = 1024;
    t.vgpr_granule = 8;
    t.sgprs_per_simd = 0;
    t.lds_per_cu = 131072;
    t.max_barriers_per_cu = 32;
  } else {
    return Expected<TargetLimits>::failure(
        Errc::invalid_argument,
        "no occupancy table for target '" + a + "' (known: gfx908, gfx90a, gfx940, gfx941, gfx942, gfx103x)");
  }
  return t;
}

R read_code_object(std::string_view bytes) {
  auto elf = unbundle(bytes);
  if (!elf) return R::failure(Errc::corrupt, elf.error());
  auto note = metadata_note(*elf);
  if (!note) return R::failure(Errc::corrupt, note.error());
  Msg root;
  MsgReader in(*note);
  if (!in.read(root)) return R::failure(Errc::corrupt, "AMDGPU metadata: " + in.error());
  const Msg* kernels = root.get("amdhsa.kernels");
  if (!kernels || kernels->kind != Msg::array)
    return R::failure(Errc::corrupt, "AMDGPU metadata: no amdhsa.kernels list");
  const Msg* target = root.get("amdhsa.target");
  std::vector<GpuResources> out;
  for (const Msg& k : kernels->items) {
    GpuResources r;
    const Msg* name = k.get(".name");
    if (!name || name->kind != Msg::string) return R::failure(Errc::corrupt, "AMDGPU metadata: a kernel without .name");
    r.kernel = name->s;
    r.target = target && target->kind == Msg::string ? target->s : "";
    r.wave_size = static_cast<int>(k.num(".wavefront_size"));
    r.vgprs = static_cast<int>(k.num(".vgpr_count"));
    r.agprs = static_cast<int>(k.num(".agpr_count"));
    r.sgprs = static_cast<int>(k.num(".sgpr_count"));
    r.lds_bytes = k.num(".group_segment_fixed_size");
    r.scratch_bytes = k.num(".private_segment_fixed_size");
    r.vgpr_spills = static_cast<int>(k.num(".vgpr_spill_count"));
    r.sgpr_spills = static_cast<int>(k.num(".sgpr_spill_count"));
    r.dynamic_stack = k.num(".uses_dynamic_stack") != 0;
    r.max_workgroup_size = static_cast<int>(k.num(".max_flat_workgroup_size"));
    out.push_back(std::move(r));
  }
  return out;
}

void apply_launch(GpuResources& r, const TargetLimits& t, int block_threads, int64_t dynamic_lds) {
  r.block_threads = block_threads;
  r.dynamic_lds_bytes = dynamic_lds;
  const int wave = r.wave_size > 0 ? r.wave_size : t.wave_size;
  const int64_t waves_per_wg = std::max<int64_t>(1, (block_threads + wave - 1) / wave);
  // Resident waves per SIMD allowed by each resource, then workgroups per CU from them.
  std::map<std::string, int64_t> per_simd;
  per_simd["waves"] = t.max_waves_per_simd;
  const int vgpr_use = t.vgprs_per_simd == 256 ? std::max(r.vgprs, r.agprs) : r.vgprs;  // gfx908: two files
  if (vgpr_use > 0) per_simd["vgprs"] = t.vgprs_per_simd / round_up(vgpr_use, t.vgpr_granule);
  if (t.sgprs_per_simd > 0 && r.sgprs > 0) per_simd["sgprs"] = t.sgprs_per_simd / round_up(r.sgprs, t.sgpr_granule);
  std::string limit = "waves";
  int64_t simd_waves = t.max_waves_per_simd;
  for (const char* k : {"vgprs", "sgprs"})
    if (auto it = per_simd.find(k); it != per_simd.end() && it->second < simd_waves) {
      simd_waves = it->second;
      limit = k;
    }
  int64_t wgs = simd_waves * t.simds_per_cu / waves_per_wg;  // workgroups per CU by registers / wave slots
  const int64_t lds = r.lds_bytes + dynamic_lds;
  if (lds > 0 && t.lds_per_cu / lds < wgs) {
    wgs = t.lds_per_cu / lds;
    limit = "lds";
  }
  if (waves_per_wg > 1 && t.max_barriers_per_cu < wgs) {
    wgs = t.max_barriers_per_cu;
    limit = "workgroups";
  }
  if (lds > t.lds_per_workgroup) {
    wgs = 0;
    limit = "lds";
  }
  r.waves_per_simd = static_cast<int>(std::min<int64_t>(t.max_waves_per_simd, wgs * waves_per_wg / t.simds_per_cu));
  if (wgs > 0 && r.waves_per_simd == 0) r.waves_per_simd = 1;  // fewer waves than SIMDs: some SIMDs hold one
  r.occupancy_limit = limit;
}

std::string refusal(const GpuResources& r, const TargetLimits& t) {
  const std::string k = "kernel " + r.kernel + " on " + t.arch + ": ";
  if (r.vgpr_spills > 0 || r.sgpr_spills > 0)
    return k + "spills registers to scratch (" + std::to_string(r.vgpr_spills) + " VGPRs, " +
           std::to_string(r.sgpr_spills) + " SGPRs; " + std::to_string(r.scratch_bytes) + " B of scratch per lane)";
  if (r.dynamic_stack) return k + "uses a dynamic stack (scratch of unknown size: recursion or alloca)";
  const int64_t lds = r.lds_bytes + r.dynamic_lds_bytes;
  if (lds > t.lds_per_workgroup)
    return k + "needs " + std::to_string(lds) + " B of LDS per workgroup (" + std::to_string(r.lds_bytes) +
           " static + " + std::to_string(r.dynamic_lds_bytes) + " dynamic), more than the " +
           std::to_string(t.lds_per_workgroup) + " B a workgroup may have";
  if (r.block_threads > 0 && r.max_workgroup_size > 0 && r.block_threads > r.max_workgroup_size)
    return k + "launched with " + std::to_string(r.block_threads) + " threads per block, above its bound of " +
           std::to_string(r.max_workgroup_size);
  if (r.block_threads > 0 && r.waves_per_simd == 0) return k + "no workgroup of this launch fits on a compute unit";
  return {};
}

}  // namespace kevolve::hip
