#include "dpstream/linalg/symmetric_product.hpp"

#include <stdexcept>
#include <string>

namespace dpstream::linalg {

namespace {

using Eigen::Index;

// Dot products of `Rows` columns of c (pointers cr) with `Cols` columns of q (pointers qc), length d:
// Rows × Cols vector accumulators, one load of each column's packet per step.
template <class T, int Rows, int Cols>
void dot_block(const T* const (&cr)[Rows], const T* const (&qc)[Cols], Index d, T (&out)[Rows][Cols]) {
  namespace ei = Eigen::internal;
  using Packet = typename ei::packet_traits<T>::type;
  constexpr Index kLanes = ei::packet_traits<T>::size;
  Packet acc[Rows][Cols];
  for (int r = 0; r < Rows; ++r)
    for (int c = 0; c < Cols; ++c) acc[r][c] = ei::pset1<Packet>(T(0));
  const Index vectorised = d / kLanes * kLanes;
  for (Index j = 0; j < vectorised; j += kLanes) {
    Packet x[Cols];
    for (int c = 0; c < Cols; ++c) x[c] = ei::ploadu<Packet>(qc[c] + j);
    for (int r = 0; r < Rows; ++r) {
      const Packet y = ei::ploadu<Packet>(cr[r] + j);
      for (int c = 0; c < Cols; ++c) acc[r][c] = ei::pmadd(y, x[c], acc[r][c]);
    }
  }
  for (int r = 0; r < Rows; ++r)
    for (int c = 0; c < Cols; ++c) {
      T sum = ei::predux(acc[r][c]);
      for (Index j = vectorised; j < d; ++j) sum += cr[r][j] * qc[c][j];
      out[r][c] = sum;
    }
}

// Columns i .. i + Rows − 1 of w: three of q's columns at a time, then the one or two left.
template <class T, class MatrixT, int Rows>
void row_panel(const Eigen::Ref<const MatrixT>& c, const Eigen::Ref<const MatrixT>& q, Eigen::Ref<MatrixT> w, Index i) {
  const Index d = c.rows(), b = q.cols();
  const T* cr[Rows];
  for (int r = 0; r < Rows; ++r) cr[r] = c.col(i + r).data();
  Index j = 0;
  for (; j + 3 <= b; j += 3) {
    const T* const qc[3] = {q.col(j).data(), q.col(j + 1).data(), q.col(j + 2).data()};
    T out[Rows][3];
    dot_block<T, Rows, 3>(cr, qc, d, out);
    for (int r = 0; r < Rows; ++r)
      for (int s = 0; s < 3; ++s) w(i + r, j + s) = out[r][s];
  }
  for (; j < b; ++j) {
    const T* const qc[1] = {q.col(j).data()};
    T out[Rows][1];
    dot_block<T, Rows, 1>(cr, qc, d, out);
    for (int r = 0; r < Rows; ++r) w(i + r, j) = out[r][0];
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
  Index i = 0;
  for (; i + 4 <= d; i += 4) row_panel<T, MatrixT, 4>(c, q, w, i);
  for (; i < d; ++i) row_panel<T, MatrixT, 1>(c, q, w, i);
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
