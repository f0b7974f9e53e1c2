// dpstream-replay's settings, each declared once (settings.cpp, replay_settings()): its flag, its
// help, whether a resumed run must share it, and its key in the JSON line. The command line, the
// resume check and the JSON line all read that one table, so a new flag is one entry there (and its
// use in the session): a setting cannot be forgotten by the resume check.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/cli_fwd.hpp"
#include <Eigen/Core>

#include "common/cli.hpp"
#include "common/input.hpp"
#include "dpstream/session/online_pca_options.hpp"
#include "common/unit_flags.hpp"
#include "dpstream/stream/continual_sum.hpp"

namespace dpstream::tools::replay {

struct ReplaySettings {
  InputFlags input;
  NormalizeFlags normalize;
  PrivacyFlags privacy;
  // BLT with GOE-shaped noise: the lowest-regret continual release that assumes nothing about drift
  // (docs/tools.md has the table); separable is lower still for streams without drift.
  std::string mechanism = "blt";
  std::string noise_shape = "goe";
  std::string blt_error = "max";
  std::string out = "replay-out";
  Eigen::Index k = 10;
  std::uint64_t block = 128;
  std::uint64_t limit = 0;
  std::optional<std::uint64_t> shuffle;
  bool nonprivate = false;
  bool nonnegative = false;  // rows have no negative entry; the learner projects what it follows
  std::string checkpoint;    // "": none
  std::uint64_t checkpoint_every = 0;
  bool resume = false;
  UnitFlags unit;          // --user-column, --max-rows-per-user, --min-separation (unit_flags.hpp)
  std::string max_memory;  // --max-memory SIZE ("": the default, from the machine's memory)
  std::uint64_t test_kill_at_block = 0;  // tests: SIGKILL itself before replaying this block (0: never)
  // Tests and audits (no flag, not in the settings table): called with every release of the private
  // stream as it is made, on the stream's thread, before the learner reads it. Empty: none.
  std::function<void(const stream::ContinualCovariance::Release&)> release_observer;
  // --learner: the private learners, comma-separated, run side by side on one stream
  // (dpstream/session/row_learners.hpp).
  // "fpl" alone (the default) is the run as it was before the list existed.
  std::string learner = "fpl";
  std::uint64_t minibatch = 1000;  // rows per step of oja and per refresh of power

  // The --learner list, checked (UsageError naming --learner), in the order given.
  std::vector<std::string> learners() const;
  bool has_learner(const char* name) const;

  // The options the continual sum is built with (horizon: releases, 0 unbounded).
  stream::ContinualSumOptions stream_options(std::uint64_t horizon) const;
  // The online-PCA session these settings run (the stream's length if known; the checkpoint's
  // release journal beside --checkpoint).
  session::OnlinePcaOptions session_options(std::optional<std::uint64_t> known_rows) const;
};

// One setting as the table declares it, bound to a ReplaySettings.
struct Setting {
  std::string flag;                    // "--epsilon"
  std::function<std::string()> text;   // the value in words, for the resume check
  std::function<std::string()> json;   // the value as JSON text
  const char* json_key = nullptr;      // its key in the JSON line (nullptr: not there)
  bool resume = false;                 // a resumed run must have the same value
  bool privacy = false;                // JSON null under --nonprivate
  bool headline = false;               // among the JSON line's first keys (scripts read them by position)
};

// Every setting of `s`, in the table's order. The closures refer to `s`.
std::vector<Setting> replay_settings(const ReplaySettings& s);

// Registers every flag with `app`; returns a function to call after parsing (it records which
// flags were given).
std::function<void()> add_replay_options(CLI::App& app, ReplaySettings& s);

// UsageError naming the flag for anything that can be checked before the input is opened.
void validate(const ReplaySettings& s);
// UsageError (exit 2) if two of the run's files (input, checkpoint, its journal, regret.csv, regret.svg)
// are one file, or an output path holds anything but a regular file; called by validate.
void check_run_paths(const ReplaySettings& s);

// The settings a resumed run must share, as "--flag" → value.
using SettingList = std::vector<std::pair<std::string, std::string>>;
SettingList resume_settings(const ReplaySettings& s);

}  // namespace dpstream::tools::replay
