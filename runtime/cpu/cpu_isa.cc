#include "runtime/cpu/cpu_isa.h"

#include <string>

namespace onepool {
namespace {

// Widest first, so a narrower set has a larger rank.
int rank(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512:
      return 0;
    case CpuIsa::kAvx2:
      return 1;
    case CpuIsa::kPortable:
    case CpuIsa::kAuto:
      return 2;
  }
  return 2;
}

}  // namespace

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAuto:
      return "auto";
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kPortable:
      return "portable";
  }
  return "auto";
}

Expected<CpuIsa> parse_cpu_isa(std::string_view text) {
  for (CpuIsa isa : {CpuIsa::kAuto, CpuIsa::kAvx512, CpuIsa::kAvx2, CpuIsa::kPortable}) {
    if (text == cpu_isa_name(isa)) return isa;
  }
  return make_status(StatusCode::kInvalidArgument, "unknown CPU instruction set '",
                     std::string(text), "': expected auto, avx512, avx2 or portable");
}

namespace cpu {

CpuIsa detected_cpu_isa() {
  switch (nn::best_sgemm_isa()) {  // one CPUID check for both
    case nn::SgemmIsa::kAvx512:
      return CpuIsa::kAvx512;
    case nn::SgemmIsa::kAvx2:
      return CpuIsa::kAvx2;
    case nn::SgemmIsa::kPortable:
      return CpuIsa::kPortable;
  }
  return CpuIsa::kPortable;
}

Expected<CpuIsa> resolve_cpu_isa(CpuIsa requested) {
  const CpuIsa detected = detected_cpu_isa();
  if (requested == CpuIsa::kAuto) return detected;
  if (rank(requested) < rank(detected)) {
    return make_status(StatusCode::kUnsupported, "cpu_isa ", cpu_isa_name(requested),
                       " was requested, but this CPU runs at most ", cpu_isa_name(detected));
  }
  return requested;
}

nn::SgemmIsa sgemm_isa_for(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAuto:
      return nn::best_sgemm_isa();
    case CpuIsa::kAvx512:
      return nn::SgemmIsa::kAvx512;
    case CpuIsa::kAvx2:
      return nn::SgemmIsa::kAvx2;
    case CpuIsa::kPortable:
      return nn::SgemmIsa::kPortable;
  }
  return nn::SgemmIsa::kPortable;
}

}  // namespace cpu
}  // namespace onepool
