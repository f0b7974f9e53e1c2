#include "transpose_tile.hpp"

namespace dpstream::linalg::detail {

using Eigen::Index;

void transpose_tile(const double* block, Index stride, Index rows, Index cols, double* out, Index out_stride) {
  namespace ei = Eigen::internal;
  using Packet = ei::packet_traits<double>::type;
  constexpr Index kLanes = ei::packet_traits<double>::size;
  static_assert(kTile % kLanes == 0, "a tile's columns hold whole packets");  // so the stores below are aligned
  eigen_assert(out_stride % kLanes == 0 && "out's columns hold whole packets");
  Index c = 0;
  for (; c + kLanes <= cols; c += kLanes) {
    Index r = 0;
    for (; r + kLanes <= rows; r += kLanes) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"  // Packet's vector attributes, as inside Eigen
      ei::PacketBlock<Packet, kLanes> packets;
#pragma GCC diagnostic pop
      for (Index l = 0; l < kLanes; ++l) packets.packet[l] = ei::ploadu<Packet>(block + (c + l) * stride + r);
      ei::ptranspose(packets);  // packet l: S(r + l, c ..)
      for (Index l = 0; l < kLanes; ++l) ei::pstore(out + c + (r + l) * out_stride, packets.packet[l]);
    }
    for (; r < rows; ++r)
      for (Index l = 0; l < kLanes; ++l) out[c + l + r * out_stride] = block[(c + l) * stride + r];
  }
  for (; c < cols; ++c)
    for (Index r = 0; r < rows; ++r) out[c + r * out_stride] = block[c * stride + r];
}

}  // namespace dpstream::linalg::detail
