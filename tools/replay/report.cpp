#include "replay/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "common/json.hpp"
#include "common/privacy_labels.hpp"
#include "common/text.hpp"
#include "common/regret_plot.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/eval/regret_report.hpp"
#include "dpstream/base/atomic_file.hpp"
#include "dpstream/session/session_labels.hpp"

namespace dpstream::tools::replay {

namespace {

using ull = unsigned long long;

std::string privacy_subtitle(const ReplaySettings& s, const stream::ContinualCovariance& sum) {
  return "; private: " + mechanism_text(sum) + (s.noise_shape == "goe" ? " (GOE noise)" : "") +
         ", ε = " + base::format_value(s.privacy.epsilon) + ", δ = " + base::format_value(s.privacy.delta) + " (" +
         s.privacy.calibration + ")";
}

// The rows: read, used, refused; how they were bounded; the order.
std::string rows_text(const ReplayRun& run) {
  const ReplaySettings& s = run.settings();
  const GuardedReader& reader = run.reader();
  const io::RowSource& source = *run.input().source;
  const auto& counts = reader.guard_counts();
  const std::uint64_t skipped = source.skipped(), rows = reader.used();
  const stream::ContributionBound* bound = reader.bound();
  const std::string dropped =
      bound ? format(" + %llu dropped by the per-user bound", (ull)bound->counts().dropped()) : std::string();
  std::string t = format("rows: %llu used of %llu read = %llu used + %llu rejected by the guard%s + %llu skipped by the "
                         "reader%s\n",
                         (ull)rows, (ull)(source.rows_returned() + skipped), (ull)rows, (ull)counts.rejected,
                         dropped.c_str(), (ull)skipped, run.figures().length_counted ? " (counted in a first pass)" : "");
  t += format("      dimension %lld; %s; %llu zero rows; %llu clipped%s\n", (long long)source.dimension(),
              s.normalize.text().c_str(), (ull)reader.zero(), (ull)counts.clipped,
              s.normalize.normalize == "unit" && counts.clipped ? " (by an ulp or so, after the division)" : "");
  if (const std::string lines = non_row_lines_text(source); !lines.empty()) t += "      " + lines + "\n";
  t += "      input integrity: " + (run.figures().input_integrity == "verified"
                                      ? std::string("verified (the gzip CRC-32 read to the end of the stream)")
                                      : std::string("no checksum in this format")) + "\n";
  if (const std::string bound = unit_summary_text(reader.bound()); !bound.empty()) t += "      " + bound + "\n";
  if (counts.rejected) t += "      first rejected: " + reader.first_reject() + "\n";
  if (skipped) t += "      first skipped: " + source.first_skip_reason() + "\n";
  t += "order: " + (s.shuffle ? "shuffled with seed " + std::to_string(*s.shuffle) + " (all rows held in memory)"
                              : std::string("as stored")) + "\n";
  return t;
}

std::string private_learner_text(const ReplayRun& run) {
  const ReplaySettings& s = run.settings();
  const session::OnlinePcaSession& p = run.session();
  const stream::ContinualCovariance* sum = p.sum();
  if (!p.accountant()) return "private learner: none (--nonprivate): no privacy spent\n";
  const std::string rows = p.row_learners() ? p.row_learners()->describe() : std::string();
  if (!sum) return rows;
  std::string t = format(
      "private learner: FPL on a %s%s over %s, releases every %llu rows; (ε, δ) = (%s, %s)%s, %s calibration\n",
      mechanism_text(*sum).c_str(), s.noise_shape == "goe" ? " with GOE-shaped noise" : "",
      sum->options().horizon ? (std::to_string(sum->options().horizon) + " releases").c_str()
                             : "an unbounded stream (doubling epochs)",
      (ull)s.block, base::format_value(sum->options().privacy.target.epsilon()).c_str(),
      base::format_value(sum->options().privacy.target.delta()).c_str(), s.learner == "fpl" ? "" : " (its share)",
      s.privacy.calibration.c_str());
  t += format("      Gaussian DP μ = %.4g; σ per draw = %.4g; last release: step %llu, noise variance %.4g per entry\n",
              sum->mu(), sum->noise().draw_sigma(), (ull)sum->steps(), sum->latest().noise_variance);
  if (s.unit.max_rows_per_user != 0) {
    const stream::ParticipationBound b = sum->noise().participation_bound(sum->options().participation);
    t += format("      calibrated for one user: %s; sensitivity %.4g x one row's (%s)\n",
                stream::describe(sum->options().participation).c_str(), b.factor,
                b.exact ? "exact: attained by a pattern" : "a proven upper bound");
  }
  if (const auto* estimate = p.stationary()) {
    // What the learner follows: t·m̂_t, per-entry variance t²·Var(m̂_t).
    t += format("      followed: the stationary estimate t·m̂_t, noise variance %.4g per entry at step %llu\n",
                estimate->prefix_variance(sum->noise().draw_sigma()), (ull)estimate->steps());
  }
  if (const auto* reader = p.nonnegative()) {
    const int rounds = reader->options().rounds;
    t += format("      followed: read as doubly nonnegative (PSD, entries >= 0; --nonnegative): %llu of %llu releases "
                "projected exactly (%d round%s), the others by the last exact one's PSD correction, then entries "
                ">= 0 (refresh ratio %.4g)\n",
                (ull)reader->full_solves(), (ull)reader->releases(), rounds, rounds == 1 ? "" : "s",
                reader->options().refresh_ratio);
  }
  const auto& stats = p.private_learner()->refresh_stats();
  t += format("      noise: %s; refreshes %llu (block products %llu, full solves %llu)\n", s.privacy.noise_text().c_str(),
              (ull)p.private_learner()->refreshes(), (ull)stats.iterations, (ull)stats.full_solves);
  return t + rows;
}

std::string regret_table(const ReplayRun& run) {
  const session::OnlinePcaSession& p = run.session();
  const eval::RegretMeter& meter = p.meter();
  const long long k = static_cast<long long>(run.settings().k);
  std::string t = format("k = %lld, OPT = %.6g (sum of the top-%lld eigenvalues of the exact covariance)\n", k,
                         meter.opt(), k);
  t += format("  %-34s %14s %14s %12s\n", "learner", "gain", "regret", "regret/OPT");
  if (p.sum())
    t += format("  %-34s %14.6g %14.6g %11.3f%%\n", "private FPL", meter.gain(p.private_index()),
                meter.regret(p.private_index()), 100 * meter.regret_over_opt(p.private_index()));
  for (const std::string& name : p.row_learners() ? p.row_learners()->meter_names() : std::vector<std::string>{})
    t += format("  %-34s %14.6g %14.6g %11.3f%%\n", session::learner_label(name).c_str(),
                meter.gain(meter.learner(name)), meter.regret(meter.learner(name)),
                100 * meter.regret_over_opt(meter.learner(name)));
  t += format("  %-34s %14.6g %14.6g %11.3f%%\n", "follow-the-leader (non-private)", meter.gain(p.ftl_index()),
              meter.regret(p.ftl_index()), 100 * meter.regret_over_opt(p.ftl_index()));
  return t;
}

// --learner: each listed learner's final subspace against the non-private top k of all rows.
std::string learners_text(const ReplayRun& run) {
  const session::OnlinePcaSession& p = run.session();
  if (!p.accountant()) return "";
  std::string t = format("  %-50s %15s %11s %10s\n", "learner (each an equal GDP share of the budget)",
                         "captured/top-k", "regret/OPT", "eps share");
  for (const session::LearnerFigures& f : p.learner_figures())
    t += format("  %-50s %14.3f%% %10.3f%% %10.4g\n", (f.name + ": " + session::learner_label(f.name)).c_str(),
                100 * f.captured_ratio, 100 * f.regret_over_opt, f.epsilon_share);
  const std::vector<std::string>& scored = p.meter().learners();
  for (const session::LearnerFigures& f : p.learner_figures())
    if (f.name != "fpl" && std::find(scored.begin(), scored.end(), f.name) == scored.end())
      t += "  (" + f.name + " is offline, from all rows: its regret/OPT is its fixed subspace's in hindsight, " +
           "1 − captured)\n";
  return t;
}

std::string timing_text(const ReplayRun& run) {
  const ReplaySettings& s = run.settings();
  const RunFigures& f = run.figures();
  const session::OnlinePcaSession& p = run.session();
  const double rows = static_cast<double>(run.reader().used());
  const std::string ahead = p.nonnegative() ? format(", projections ahead %.2f s", p.cpu_projection()) : "";
  std::string t = format("time: %.2f s (%.0f rows/s); reading %.2f s%s; CPU of the concurrent workers: stream %.2f s, "
                         "private learner %.2f s%s, evaluation %.2f s; final OPT and flush %.2f s\n",
                         f.seconds, rows / f.seconds, f.read_seconds, s.shuffle ? " (before the replay)" : " (overlapped)",
                         p.cpu_stream(), p.cpu_learner(), ahead.c_str(), p.cpu_evaluation(), f.finish_seconds);
  if (s.checkpoint.empty()) return t;
  t += "checkpoints: " + s.checkpoint;
  if (f.resumed_rows)
    t += format("; resumed at release %llu (row %llu)", (ull)(f.resumed_rows / s.block), (ull)f.resumed_rows);
  if (f.checkpoints_written)
    t += format("; %llu written (every %llu releases), %.1f MB each; on average the workers drained in %.3f s, "
                "the state was copied in %.3f s and written in %.3f s beside the replay",
                (ull)f.checkpoints_written, (ull)s.checkpoint_every, f.checkpoint_bytes / 1e6,
                f.drain_seconds / f.checkpoints_written, f.copy_seconds / f.checkpoints_written,
                f.write_seconds / f.checkpoints_written);
  return t + "; removed (the run is complete)\n";
}

std::string labels_text(const ReplayRun& run) {
  const session::OnlinePcaSession& p = run.session();
  if (!p.accountant())
    return not_private_line("every figure (--nonprivate: nothing is released privately)") +
           budget_line(session::session_budget(p));
  const std::string bound = "||a|| <= " + base::format_value(run.settings().normalize.norm_bound()) +
                            " after the guard";
  return unit_neighbours_line(run.settings().unit, session::session_relation(p), bound) + "      private: the learners' subspaces (what each follows)\n" +
         budget_line(session::session_budget(p)) +
         not_private_line("the row counts (used, read, rejected, skipped, zero, clipped), OPT, gains, regrets, "
                          "captured ratios and timings: evaluation on the raw rows");
}

}  // namespace

std::string mechanism_text(const stream::ContinualCovariance& sum) {
  // The separable strategy's releases are followed through their stationary estimate (online_pca_session.hpp).
  const bool separable = sum.options().strategy == stream::NoiseStrategy::separable;
  return sum.noise().describe() + (separable ? ", followed through its stationary estimate" : "");
}

ReportFiles write_report_files(const ReplayRun& run) {
  const ReplaySettings& s = run.settings();
  const session::OnlinePcaSession& p = run.session();
  const std::filesystem::path dir(s.out);
  ReportFiles files{(dir / "regret.csv").string(), (dir / "regret.svg").string()};
  std::ostringstream subtitle;
  subtitle << run.reader().used() << " rows × " << run.input().source->dimension() << ", k = " << s.k
           << ", blocks of " << s.block;
  subtitle << (p.sum() ? privacy_subtitle(s, *p.sum())
                       : p.accountant() ? "; ε = " + base::format_value(s.privacy.epsilon) + " shared by " + s.learner
                                        : std::string("; non-private only"));
  subtitle << (s.shuffle ? "; shuffled" : "; log order");
  std::vector<std::string> labels;
  for (const std::string& name : p.meter().learners())
    labels.push_back(name == "private" && s.learner == "fpl"
                         ? "private FPL (ε = " + base::format_value(s.privacy.epsilon) + ")"
                         : session::learner_label(name));
  // One set: both are written and fsynced before either replaces the old one (a full disk leaves the
  // old pair whole). 0600: OPT is a non-private statistic.
  base::write_files_atomically(
      {{files.csv, eval::regret_csv(p.meter())},
       {files.svg, regret_svg(p.meter(), "Online PCA regret on " + run.input().title, subtitle.str(), labels)}});
  return files;
}

std::string summary_text(const ReplayRun& run, const ReportFiles& files) {
  std::string t = rows_text(run) + private_learner_text(run) + regret_table(run) + learners_text(run) + timing_text(run) +
                  labels_text(run);
  if (const auto* accountant = run.session().accountant()) {
    const privacy::Spent spent = accountant->spent();
    const std::size_t charges = accountant->ledger().size();
    t += format("privacy spent (accountant, %zu charge%s): epsilon %s at delta %s\n", charges, charges == 1 ? "" : "s",
                base::format_value(spent.epsilon).c_str(), base::format_value(spent.delta).c_str());
  }
  return t + format("wrote %s (%zu curve points) and %s\n", files.csv.c_str(), run.session().meter().curve().size(),
                    files.svg.c_str());
}

std::string json_line(const ReplayRun& run, const ReportFiles& files) {
  const ReplaySettings& s = run.settings();
  const session::OnlinePcaSession& p = run.session();
  const eval::RegretMeter& meter = p.meter();
  const stream::ContinualCovariance* sum = p.sum();
  const std::size_t main_learner = p.main_index();
  const auto& counts = run.reader().guard_counts();
  const std::vector<Setting> settings = replay_settings(s);
  auto add_settings = [&](JsonLine& j, bool headline) {
    for (const Setting& setting : settings)
      if (setting.json_key && setting.headline == headline) {
        if (setting.privacy && !p.accountant()) j.add_null(setting.json_key);
        else j.add_raw(setting.json_key, setting.json());
      }
  };
  JsonLine j;
  j.add("rows", run.reader().used()).add("dim", static_cast<std::int64_t>(run.input().source->dimension()));
  add_settings(j, true);
  j.add("opt", meter.opt()).add("gain", meter.gain(main_learner)).add("regret", meter.regret(main_learner));
  j.add("regret_over_opt", meter.regret_over_opt(main_learner));
  j.add("nonprivate_regret_over_opt", meter.regret_over_opt(p.ftl_index()));
  j.add("rows_clipped", counts.clipped).add("rows_rejected", counts.rejected);
  j.add("seconds", std::round(run.figures().seconds * 1000) / 1000);
  // Extras, after the fixed keys.
  const io::RowSource& source = *run.input().source;
  j.add("rows_read", source.rows_returned() + source.skipped()).add("rows_skipped", source.skipped());
  j.add("rows_zero", run.reader().zero());
  const io::NonRowLines& lines = source.non_row_lines();
  j.add("header_lines", lines.header).add("comment_lines", lines.comment).add("blank_lines", lines.blank);
  j.add("input_integrity", run.figures().input_integrity);
  add_settings(j, false);
  if (sum) j.add("secure_noise", sum->is_secure()).add("mu", sum->mu()).add("node_sigma", sum->noise().draw_sigma());
  else j.add_null("secure_noise").add_null("mu").add_null("node_sigma");
  if (sum && s.unit.max_rows_per_user != 0) {
    const stream::ParticipationBound b = sum->noise().participation_bound(sum->options().participation);
    j.add("unit_sensitivity_factor", b.factor).add("unit_sensitivity_exact", b.exact);
  }
  j.add("csv", files.csv).add("svg", files.svg);
  j.add("privacy_unit", s.unit.max_rows_per_user ? "user" : "row");
  std::vector<std::string> not_private = session::not_private_keys();
  if (const stream::ContributionBound* bound = run.reader().bound()) {
    j.add("users", bound->counts().units).add("rows_dropped_by_bound", bound->counts().dropped());
    not_private.insert(not_private.end(), {"users", "rows_dropped_by_bound"});
  }
  const privacy::Neighbours relation = session::session_relation(p);
  add_unit_privacy_labels(j, s.unit, p.accountant() ? &relation : nullptr, not_private);
  add_budget_label(j, session::session_budget(p));
  if (const auto* accountant = p.accountant()) {
    j.add("epsilon_spent", accountant->spent().epsilon);
    JsonLine learners;  // last: a nested object, after every flat key
    for (const session::LearnerFigures& f : p.learner_figures()) {
      JsonLine one;
      one.add("regret_over_opt", f.regret_over_opt).add("captured_ratio", f.captured_ratio);
      one.add("epsilon_share", f.epsilon_share).add("delta_share", f.delta_share);
      learners.add_raw(f.name, one.text());
    }
    j.add_raw("learners", learners.text());
  }
  return j.text();
}

}  // namespace dpstream::tools::replay
