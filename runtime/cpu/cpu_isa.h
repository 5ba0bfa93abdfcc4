// Which hand-written kernel variant a Session's CPU kernels run: SessionOptions::cpu_isa checked
// against what this CPU supports.
#pragma once

#include "onepool/session.h"
#include "onepool/status.h"
#include "runtime/cpu/kernels/sgemm_packed.h"

namespace onepool::cpu {

/// The widest instruction set this CPU runs (CPUID): kAvx512, kAvx2 (with FMA) or kPortable.
CpuIsa detected_cpu_isa();

/// `requested` made concrete: kAuto becomes detected_cpu_isa(); a set this CPU lacks is
/// kUnsupported naming both.
Expected<CpuIsa> resolve_cpu_isa(CpuIsa requested);

/// The GEMM micro-kernel for a Session's instruction set (kAuto: the widest this CPU runs).
nn::SgemmIsa sgemm_isa_for(CpuIsa isa);

}  // namespace onepool::cpu
