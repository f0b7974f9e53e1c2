// The one compiled copy of the kernels that dpstream/linalg/dense_kernels.hpp declares.
#include "dpstream/linalg/dense_kernels.hpp"

template struct Eigen::internal::gebp_kernel<
    double, double, dpstream::linalg::kernels::Index, dpstream::linalg::kernels::ResultMapper,
    dpstream::linalg::kernels::Traits::mr, dpstream::linalg::kernels::Traits::nr, false, false>;
template struct Eigen::internal::gemm_pack_lhs<
    double, dpstream::linalg::kernels::Index, dpstream::linalg::kernels::ColMapper,
    dpstream::linalg::kernels::Traits::mr, dpstream::linalg::kernels::Traits::LhsProgress,
    dpstream::linalg::kernels::Traits::LhsPacket4Packing, Eigen::ColMajor, false, false>;
template struct Eigen::internal::gemm_pack_lhs<
    double, dpstream::linalg::kernels::Index, dpstream::linalg::kernels::RowMapper,
    dpstream::linalg::kernels::Traits::mr, dpstream::linalg::kernels::Traits::LhsProgress,
    dpstream::linalg::kernels::Traits::LhsPacket4Packing, Eigen::RowMajor, false, false>;
template struct Eigen::internal::gemm_pack_rhs<
    double, dpstream::linalg::kernels::Index, dpstream::linalg::kernels::ColMapper,
    dpstream::linalg::kernels::Traits::nr, Eigen::ColMajor, false, false>;
template struct Eigen::internal::general_matrix_vector_product<
    dpstream::linalg::kernels::Index, double, dpstream::linalg::kernels::RowMapper, Eigen::RowMajor, false,
    double, dpstream::linalg::kernels::ColMapper, false, 0>;
template struct Eigen::internal::general_matrix_vector_product<
    dpstream::linalg::kernels::Index, double, dpstream::linalg::kernels::ColMapper, Eigen::ColMajor, false,
    double, dpstream::linalg::kernels::RowMapper, false, 0>;
