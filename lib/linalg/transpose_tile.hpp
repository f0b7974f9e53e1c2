// The transpose of one small block of a column-major matrix into a tile buffer (internal header,
// not installed): what the tiled symmetric passes (linalg/mirror.hpp, pca/symmetric_input.hpp)
// need to read a block's mirror column by column, and symmetric_product_upper to gather a panel
// below the diagonal.
//
// Why not entry by entry: a column of the mirror gathers one entry from each of the block's columns,
// d apart; at d = 2048 they are 16 KB apart and share one set of the L1 cache, and each of those
// passes took 1.5-2 times as long as with this.
#pragma once

#include <Eigen/Core>

namespace dpstream::linalg::detail {

// The passes' tiles are kTile × kTile.
inline constexpr Eigen::Index kTile = 32;

// out = Sᵀ for the rows × cols block S at `block` (column-major, its columns `stride` apart;
// rows, cols ≤ kTile), with out's columns out_stride apart: out[c + r·out_stride] = S(r, c). S's
// columns are read contiguously and transposed in blocks of packets. out aligned to 64 bytes (the
// widest packet's alignment: its stores are aligned ones) and out_stride a whole number of packets;
// kTile for a tile buffer of kTile² doubles.
void transpose_tile(const double* block, Eigen::Index stride, Eigen::Index rows, Eigen::Index cols, double* out,
                    Eigen::Index out_stride = kTile);

}  // namespace dpstream::linalg::detail
