// Eigen's double-precision matrix-product kernels, compiled once, in the library.
//
// Why this header exists: every translation unit that multiplies two dense double matrices (or a
// matrix and a vector) instantiates Eigen's blocked kernels anew, the GEMM micro-kernel alone ~1 s
// at -O3 and ~3 s under ASan + UBSan, in most of the library's, the tools' and the tests' units.
// These explicit instantiation declarations make such a unit call the library's copy
// (lib/linalg/dense_kernels.cpp) instead of compiling its own. Eigen marks each of these functions
// noinline, so no caller's code changes: the products are Eigen's, bit for bit. The kernels' shapes
// come from Eigen's own traits for the instruction set compiled for (dpstream.pc exports it).
// Included by the headers through which most units reach Eigen (stream/accumulators.hpp,
// linalg/decompositions.hpp, privacy/additive_mechanism.hpp); a unit that does not see it compiles
// its own copy, as before.
#pragma once

#include <Eigen/Core>

namespace dpstream::linalg::kernels {
using Index = Eigen::Index;
using Traits = Eigen::internal::gebp_traits<double, double>;
using ColMapper = Eigen::internal::const_blas_data_mapper<double, Index, Eigen::ColMajor>;
using RowMapper = Eigen::internal::const_blas_data_mapper<double, Index, Eigen::RowMajor>;
using ResultMapper = Eigen::internal::blas_data_mapper<double, Index, Eigen::ColMajor, Eigen::Unaligned, 1>;
}  // namespace dpstream::linalg::kernels

// The GEMM micro-kernel and the packing of its left (either storage order) and right operands.
extern template struct Eigen::internal::gebp_kernel<
    double, double, dpstream::linalg::kernels::Index, dpstream::linalg::kernels::ResultMapper,
    dpstream::linalg::kernels::Traits::mr, dpstream::linalg::kernels::Traits::nr, false, false>;
extern template struct Eigen::internal::gemm_pack_lhs<
    double, dpstream::linalg::kernels::Index, dpstream::linalg::kernels::ColMapper,
    dpstream::linalg::kernels::Traits::mr, dpstream::linalg::kernels::Traits::LhsProgress,
    dpstream::linalg::kernels::Traits::LhsPacket4Packing, Eigen::ColMajor, false, false>;
extern template struct Eigen::internal::gemm_pack_lhs<
    double, dpstream::linalg::kernels::Index, dpstream::linalg::kernels::RowMapper,
    dpstream::linalg::kernels::Traits::mr, dpstream::linalg::kernels::Traits::LhsProgress,
    dpstream::linalg::kernels::Traits::LhsPacket4Packing, Eigen::RowMajor, false, false>;
extern template struct Eigen::internal::gemm_pack_rhs<
    double, dpstream::linalg::kernels::Index, dpstream::linalg::kernels::ColMapper,
    dpstream::linalg::kernels::Traits::nr, Eigen::ColMajor, false, false>;
// Matrix × vector, the matrix stored by rows (a transposed column-major matrix) or by columns.
extern template struct Eigen::internal::general_matrix_vector_product<
    dpstream::linalg::kernels::Index, double, dpstream::linalg::kernels::RowMapper, Eigen::RowMajor, false,
    double, dpstream::linalg::kernels::ColMapper, false, 0>;
extern template struct Eigen::internal::general_matrix_vector_product<
    dpstream::linalg::kernels::Index, double, dpstream::linalg::kernels::ColMapper, Eigen::ColMajor, false,
    double, dpstream::linalg::kernels::RowMapper, false, 0>;
