#include "dpstream/linalg/symmetric_product.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "transpose_tile.hpp"

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

// Where the kernel reads C: the full matrix, or its upper triangle only (C(i, j) = U(min(i, j), max(i, j))).
enum class Stored { full, upper };

// C(i0 .. i0 + rows − 1, j0 .. j0 + depth − 1) into `panel` (its columns `height` apart, zeros in
// rows rows .. height − 1): the same values the kernel would read from the full C, gathered where
// C's own columns do not hold them contiguously (below U's diagonal, or a last panel of fewer rows).
template <class T, Stored kStored>
void gather(const T* c, Index ldc, Index i0, Index rows, Index height, Index j0, Index depth, T* panel) {
  Index j = j0;
  if constexpr (kStored == Stored::upper) {
    // Columns j < i0 lie wholly below the diagonal: the block U(j.., i0..) transposed, a tile at a
    // time, lanes × lanes in registers (transpose_tile).
    j = j0 + std::clamp<Index>(i0 - j0, 0, depth);
    for (Index t = j0; t < j; t += detail::kTile)
      detail::transpose_tile(c + i0 * ldc + t, ldc, std::min(detail::kTile, j - t), rows, panel + (t - j0) * height,
                             height);
    if (rows < height)
      for (Index t = j0; t < j; ++t) std::fill(panel + (t - j0) * height + rows, panel + (t - j0 + 1) * height, T(0));
  }
  for (; j < j0 + depth; ++j) {
    T* to = panel + (j - j0) * height;
    // Rows i0 + r ≤ j are U's column j; the rows below its diagonal are U's row j (U(j, i0 + r)),
    // read along that row, i.e. across U's columns.
    const Index split = kStored == Stored::full ? rows : std::clamp<Index>(j + 1 - i0, 0, rows);
    for (Index r = 0; r < split; ++r) to[r] = c[j * ldc + i0 + r];
    for (Index r = split; r < rows; ++r) to[r] = c[(i0 + r) * ldc + j];
    for (Index r = rows; r < height; ++r) to[r] = T(0);
  }
}

// Rows i0 .. i0 + Packets·lanes − 1 of W, pass by pass over C's columns: read in place where C's
// column holds them, from a gathered panel elsewhere (the same values, so the same sums).
template <class T, class MatrixT, int Packets, Stored kStored>
void row_panel(const Eigen::Ref<const MatrixT>& c, const Eigen::Ref<const MatrixT>& q, Eigen::Ref<MatrixT> w, Index i0,
               T* panel) {
  constexpr Index kRows = Packets * ei::packet_traits<T>::size;
  const Index d = c.rows(), b = q.cols();
  for (Index j0 = 0; j0 < d; j0 += kDepth) {
    const Index depth = std::min(kDepth, d - j0);
    const T* cp = c.data() + j0 * c.outerStride() + i0;
    Index ldc = c.outerStride();
    if (kStored == Stored::upper && j0 < i0 + kRows) {  // the pass reaches C's entries below U's diagonal
      gather<T, kStored>(c.data(), c.outerStride(), i0, kRows, kRows, j0, depth, panel);
      cp = panel;
      ldc = kRows;
    }
    for (Index k = 0; k < b; k += kColumns)
      tile_of_width<T, Packets, kColumns>(static_cast<int>(std::min<Index>(kColumns, b - k)), cp, ldc,
                                          q.data() + k * q.outerStride() + j0, q.outerStride(), depth,
                                          w.data() + k * w.outerStride() + i0, w.outerStride(), j0 == 0);
  }
}

// The last rows i0 .. d − 1 (fewer than one packet): a one-packet tile over a gathered panel padded
// with zeros, kColumns columns of W at a time through `out` (lanes × kColumns): the sums run in the
// same order as every other row's.
template <class T, class MatrixT, Stored kStored>
void last_rows(const Eigen::Ref<const MatrixT>& c, const Eigen::Ref<const MatrixT>& q, Eigen::Ref<MatrixT> w, Index i0,
               T* panel, T* out) {
  constexpr Index kLanes = ei::packet_traits<T>::size;
  const Index d = c.rows(), b = q.cols(), rows = d - i0;
  for (Index k = 0; k < b; k += kColumns) {
    const int columns = static_cast<int>(std::min<Index>(kColumns, b - k));
    for (Index j0 = 0; j0 < d; j0 += kDepth) {
      const Index depth = std::min(kDepth, d - j0);
      gather<T, kStored>(c.data(), c.outerStride(), i0, rows, kLanes, j0, depth, panel);
      tile_of_width<T, 1, kColumns>(columns, panel, kLanes, q.data() + k * q.outerStride() + j0, q.outerStride(),
                                    depth, out, kLanes, j0 == 0);
    }
    for (Index col = 0; col < columns; ++col)
      for (Index r = 0; r < rows; ++r) w(i0 + r, k + col) = out[col * kLanes + r];
  }
}

template <class T, class MatrixT, Stored kStored>
void product(const char* fn, const Eigen::Ref<const MatrixT>& c, const Eigen::Ref<const MatrixT>& q,
             Eigen::Ref<MatrixT> w) {
  const Index d = c.rows();
  if (c.cols() != d || q.rows() != d || w.rows() != d || w.cols() != q.cols())
    throw std::invalid_argument(std::string(fn) + ": c must be d x d and q, w d x b; got c " +
                                std::to_string(c.rows()) + "x" + std::to_string(c.cols()) + ", q " +
                                std::to_string(q.rows()) + "x" + std::to_string(q.cols()) + ", w " +
                                std::to_string(w.rows()) + "x" + std::to_string(w.cols()));
  constexpr Index kLanes = ei::packet_traits<T>::size;
  // A gathered panel (kPackets·lanes × kDepth: 48 KB in float or double) and the last rows' tile.
  alignas(64) T panel[kPackets * kLanes * kDepth];
  alignas(64) T out[kLanes * kColumns];
  Index i = 0;
  for (; i + kPackets * kLanes <= d; i += kPackets * kLanes) row_panel<T, MatrixT, kPackets, kStored>(c, q, w, i, panel);
  for (; i + kLanes <= d; i += kLanes) row_panel<T, MatrixT, 1, kStored>(c, q, w, i, panel);
  if (i < d) last_rows<T, MatrixT, kStored>(c, q, w, i, panel, out);
}

}  // namespace

void symmetric_product(const Eigen::Ref<const Eigen::MatrixXf>& c, const Eigen::Ref<const Eigen::MatrixXf>& q,
                       Eigen::Ref<Eigen::MatrixXf> w) {
  product<float, Eigen::MatrixXf, Stored::full>("symmetric_product", c, q, w);
}

void symmetric_product(const Eigen::Ref<const Eigen::MatrixXd>& c, const Eigen::Ref<const Eigen::MatrixXd>& q,
                       Eigen::Ref<Eigen::MatrixXd> w) {
  product<double, Eigen::MatrixXd, Stored::full>("symmetric_product", c, q, w);
}

void symmetric_product_upper(const Eigen::Ref<const Eigen::MatrixXd>& upper, const Eigen::Ref<const Eigen::MatrixXd>& q,
                             Eigen::Ref<Eigen::MatrixXd> w) {
  product<double, Eigen::MatrixXd, Stored::upper>("symmetric_product_upper", upper, q, w);
}

}  // namespace dpstream::linalg
