#include "dpstream/linalg/symmetric_product.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace dpstream::linalg {

namespace {

using Eigen::Index;
namespace ei = Eigen::internal;

// The register tile: W(i0 .. i0 + kPackets·lanes − 1, c0 .. c0 + kColumns − 1) held in vector
// registers while C's columns stream past. Each step j loads kPackets packets of C(:, j) and
// broadcasts kColumns entries Q(j, ·) for kPackets·kColumns multiply-adds.
#if defined(EIGEN_VECTORIZE_AVX512)
constexpr int kPackets = 3, kColumns = 8;  // 24 accumulators + 3 loads + 1 broadcast of 32 registers
#else
constexpr int kPackets = 3, kColumns = 4;  // 12 accumulators + 4 of 16
#endif
// Steps j of one pass: a kPackets-packet panel of C over kDepth columns (48 KB in float with
// AVX-512) is read from memory once and from cache for Q's other column blocks.
constexpr Index kDepth = 256;

// W(rows, Columns) (=, or += if !overwrite) C(rows, j0 .. j0 + depth) · Q(j0 .. j0 + depth, Columns);
// c, q and w point at the tile's first entries; rows = Packets·lanes.
template <class T, int Packets, int Columns>
void tile(const T* c, Index ldc, const T* q, Index ldq, Index depth, T* w, Index ldw, bool overwrite) {
  using Packet = typename ei::packet_traits<T>::type;
  constexpr Index kLanes = ei::packet_traits<T>::size;
  Packet acc[Packets][Columns];
  for (int p = 0; p < Packets; ++p)
    for (int k = 0; k < Columns; ++k) acc[p][k] = ei::pset1<Packet>(T(0));
  for (Index j = 0; j < depth; ++j) {
    Packet x[Packets];
    for (int p = 0; p < Packets; ++p) x[p] = ei::ploadu<Packet>(c + j * ldc + p * kLanes);
    for (int k = 0; k < Columns; ++k) {
      const Packet y = ei::pset1<Packet>(q[k * ldq + j]);
      for (int p = 0; p < Packets; ++p) acc[p][k] = ei::pmadd(x[p], y, acc[p][k]);
    }
  }
  for (int k = 0; k < Columns; ++k)
    for (int p = 0; p < Packets; ++p) {
      T* to = w + k * ldw + p * kLanes;
      ei::pstoreu(to, overwrite ? acc[p][k] : ei::padd(ei::ploadu<Packet>(to), acc[p][k]));
    }
}

// The tile `columns` wide (1 ≤ columns ≤ Columns), a compile-time width: kColumns, or the last
// b mod kColumns columns.
template <class T, int Packets, int Columns>
void tile_of_width(int columns, const T* c, Index ldc, const T* q, Index ldq, Index depth, T* w, Index ldw,
                   bool overwrite) {
  if constexpr (Columns > 0) {
    if (columns == Columns) return tile<T, Packets, Columns>(c, ldc, q, ldq, depth, w, ldw, overwrite);
    tile_of_width<T, Packets, Columns - 1>(columns, c, ldc, q, ldq, depth, w, ldw, overwrite);
  }
}

// Rows i0 .. i0 + Packets·lanes − 1 of W, pass by pass over C's columns.
template <class T, class MatrixT, int Packets>
void row_panel(const Eigen::Ref<const MatrixT>& c, const Eigen::Ref<const MatrixT>& q, Eigen::Ref<MatrixT> w, Index i0) {
  const Index d = c.rows(), b = q.cols();
  for (Index j0 = 0; j0 < d; j0 += kDepth) {
    const Index depth = std::min(kDepth, d - j0);
    const T* cp = c.data() + j0 * c.outerStride() + i0;
    for (Index k = 0; k < b; k += kColumns)
      tile_of_width<T, Packets, kColumns>(static_cast<int>(std::min<Index>(kColumns, b - k)), cp, c.outerStride(),
                                          q.data() + k * q.outerStride() + j0, q.outerStride(), depth,
                                          w.data() + k * w.outerStride() + i0, w.outerStride(), j0 == 0);
  }
}

template <class T, class MatrixT>
void product(const Eigen::Ref<const MatrixT>& c, const Eigen::Ref<const MatrixT>& q, Eigen::Ref<MatrixT> w) {
  const Index d = c.rows();
  if (c.cols() != d || q.rows() != d || w.rows() != d || w.cols() != q.cols())
    throw std::invalid_argument("symmetric_product: c must be d x d and q, w d x b; got c " + std::to_string(c.rows()) +
                                "x" + std::to_string(c.cols()) + ", q " + std::to_string(q.rows()) + "x" +
                                std::to_string(q.cols()) + ", w " + std::to_string(w.rows()) + "x" +
                                std::to_string(w.cols()));
  constexpr Index kLanes = ei::packet_traits<T>::size;
  Index i = 0;
  for (; i + kPackets * kLanes <= d; i += kPackets * kLanes) row_panel<T, MatrixT, kPackets>(c, q, w, i);
  for (; i + kLanes <= d; i += kLanes) row_panel<T, MatrixT, 1>(c, q, w, i);
  // The last d mod lanes rows from C's columns (C = Cᵀ): contiguous dot products.
  if (i < d) w.bottomRows(d - i) = c.rightCols(d - i).transpose().lazyProduct(q);
}

}  // namespace

void symmetric_product(const Eigen::Ref<const Eigen::MatrixXf>& c, const Eigen::Ref<const Eigen::MatrixXf>& q,
                       Eigen::Ref<Eigen::MatrixXf> w) {
  product<float, Eigen::MatrixXf>(c, q, w);
}

void symmetric_product(const Eigen::Ref<const Eigen::MatrixXd>& c, const Eigen::Ref<const Eigen::MatrixXd>& q,
                       Eigen::Ref<Eigen::MatrixXd> w) {
  product<double, Eigen::MatrixXd>(c, q, w);
}

}  // namespace dpstream::linalg
