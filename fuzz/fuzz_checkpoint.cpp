// libFuzzer target: restoring continual-sum checkpoints and noise-strategy states from bytes
// (include/dpstream/stream/continual_sum.hpp, tree_noise.hpp, factorization_noise.hpp,
// continual_noise.hpp). Input: first byte = configuration (checkpoint_configs.hpp), rest = bytes.
//
// ContinualSum::load (configs 0-5). Documented errors: CorruptInput ("Restoring with other
// options, or from corrupt or truncated bytes, throws CorruptInput naming the field"). On success:
//  * round trip: save() of the restored stream must load again (the library must read
//    what it writes) and save again to the same bytes;
//  * the restored stream is usable: latest() if it has a release; then rows up to past the next
//    release and flush(). Documented there: BudgetExhausted past a fixed horizon; for an unbounded
//    stream, InvalidParameter only at 2^64 - 1 steps (EpochTreeNoise::advance);
//  * after those rows, save → load must still succeed.
// ContinualNoise::load (configs 6-9) of a parsed proto::ContinualNoiseState. Documented errors:
// CorruptInput. On success: save → load into a fresh object → save gives the same bytes; steps() ≤
// horizon(); advance() until past the horizon throws InvalidParameter only there (documented); the
// closed forms release_variance/release_weights do not throw for steps in [1, horizon].
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "checkpoint_configs.hpp"
#include "continual_sum.pb.h"
#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "fuzz_common.hpp"

using dpstream::BudgetExhausted;
using dpstream::CorruptInput;
using dpstream::InvalidParameter;
using dpstream_fuzz::fuzz_fail;

namespace {

template <class Sum>
std::string round_trip(const Sum& sum, Eigen::Index dimension, const dpstream::stream::ContinualSumOptions& options,
                       const char* when) {
  const std::string once = sum.save();
  auto acc = dpstream_fuzz::fuzz_accountant();
  try {
    const Sum back = Sum::load(once, dimension, options, acc);
    if (back.save() != once) {
      std::fprintf(stderr, "%s: re-saved checkpoint differs\n", when);
      fuzz_fail("checkpoint save -> load -> save is not stable");
    }
  } catch (const CorruptInput& e) {
    std::fprintf(stderr, "%s: the library refuses its own checkpoint: %s\n", when, e.what());
    fuzz_fail("save() of a restored stream does not load");
  }
  return once;
}

template <class Sum>
void restore_sum(const std::string& bytes, const dpstream_fuzz::SumConfig& config) {
  const auto& options = config.options;
  auto acc = dpstream_fuzz::fuzz_accountant();
  std::optional<Sum> sum;
  try {
    sum.emplace(Sum::load(bytes, config.dimension, options, acc));
  } catch (const CorruptInput&) {
    return;
  }
  round_trip(*sum, config.dimension, options, "after restore");

  if (sum->has_release()) {
    const auto release = sum->latest();
    FUZZ_CHECK(release.step == sum->steps());
    FUZZ_CHECK(!(release.noise_variance < 0));
  }
  // Rows of norm < L (= 1): enough to complete the pending block and one more.
  const Eigen::VectorXd row = Eigen::VectorXd::Constant(config.dimension, 0.25);
  const std::uint64_t rows = 2 * options.block_rows + 1;
  for (std::uint64_t i = 0; i < rows; ++i) {
    try {
      sum->update(row);
    } catch (const BudgetExhausted&) {
      FUZZ_CHECK(options.horizon != 0);  // only a fixed horizon refuses rows
      break;
    } catch (const InvalidParameter& e) {
      if (options.horizon == 0 && sum->steps() == UINT64_MAX) break;
      std::fprintf(stderr, "update() after restore threw InvalidParameter: %s\n", e.what());
      fuzz_fail("update() of a restored stream throws an undocumented InvalidParameter");
    }
  }
  try {
    sum->flush();
  } catch (const InvalidParameter& e) {
    if (!(options.horizon == 0 && sum->steps() == UINT64_MAX)) {
      std::fprintf(stderr, "flush() after restore threw InvalidParameter: %s\n", e.what());
      fuzz_fail("flush() of a restored stream throws an undocumented InvalidParameter");
    }
  }
  round_trip(*sum, config.dimension, options, "after more rows");
}

void restore_noise(const std::string& bytes, unsigned config) {
  dpstream::proto::ContinualNoiseState state;
  if (!state.ParseFromString(bytes)) return;
  auto noise = dpstream_fuzz::noise_config(config);
  try {
    noise->load(state);
  } catch (const CorruptInput&) {
    return;
  }
  const std::uint64_t horizon = noise->horizon();
  if (horizon != 0) FUZZ_CHECK(noise->steps() <= horizon);
  FUZZ_CHECK(noise->steps() == state.steps());

  dpstream::proto::ContinualNoiseState saved;
  noise->save(saved);
  auto again = dpstream_fuzz::noise_config(config);
  try {
    again->load(saved);
  } catch (const CorruptInput& e) {
    std::fprintf(stderr, "the strategy refuses its own saved state: %s\n", e.what());
    fuzz_fail("save() of a loaded noise state does not load");
  }
  dpstream::proto::ContinualNoiseState saved_again;
  again->save(saved_again);
  if (saved.SerializeAsString() != saved_again.SerializeAsString())
    fuzz_fail("noise state save -> load -> save is not stable");

  const std::uint64_t t = noise->steps();
  if (t > 0) {
    (void)noise->release_variance(t);
    // Honaker weights recurse over every level; the epochs' trees can be 63 levels deep.
    if (config != 7) (void)noise->release_weights(t);
  }
  dpstream::privacy::SeededNoiseSource source(11);
  Eigen::VectorXd release_noise = Eigen::VectorXd::Zero(noise->size());
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t before = noise->steps();
    try {
      noise->advance(source, release_noise);
    } catch (const InvalidParameter& e) {
      if ((horizon != 0 && before >= horizon) || (horizon == 0 && before == UINT64_MAX)) break;
      std::fprintf(stderr, "advance() at step %llu of %llu threw: %s\n", static_cast<unsigned long long>(before),
                   static_cast<unsigned long long>(horizon), e.what());
      fuzz_fail("advance() of a loaded strategy throws before its horizon");
    }
    FUZZ_CHECK(noise->steps() == before + 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const unsigned config = data[0] % dpstream_fuzz::kConfigs;
  const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if (config >= dpstream_fuzz::kFirstNoiseConfig) {
    restore_noise(bytes, config);
    return 0;
  }
  const dpstream_fuzz::SumConfig c = dpstream_fuzz::sum_config(config);
  if (c.covariance) restore_sum<dpstream::stream::ContinualCovariance>(bytes, c);
  else restore_sum<dpstream::stream::ContinualVectorSum>(bytes, c);
  return 0;
}
