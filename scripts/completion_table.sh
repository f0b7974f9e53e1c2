#!/usr/bin/env bash
# The completion table: test RMSE of dpstream-recommend against ε ∈ {0.5, 1, 2, 5, 10} on the two
# papers' synthetic sets, mean over seeds 1..3 (data split and noise both seeded by S).
#   Frank–Wolfe on the set of Jain, Thakkar & Thakurta, "Differentially private matrix completion
#     revisited" (ICML 2018, §4; --synthetic seed001), scaled down: rank one, 100,000 users × 100
#     items, 22 ratings each (10% held out, ξ = 20 so L = √20), T = 10, step 2/(t+1), oracle
#     k = ‖u‖‖v‖ (a reference prototype's choices);
#     faithful = the paper's σ, rigorous = tight calibration; plus the non-private run.
#   ALS (T = 50) and IRLS (T = 50, K = 20) on the set of Gowtham, Gokularam, Tholeti & Kalyani,
#     "Introducing the Huber mechanism for differentially private low-rank matrix completion" (arXiv
#     2022, §4; --synthetic seed004): 200 × 200, rank 5, 10% observed, λ = 0.5,
#     RMSE over ALL entries of the truth (the paper's metric) — faithful: --epsilon is the paper's per-draw
#     ε (Table 1 with Δf = 5), rigorous: the whole run's (ε, δ) with ξ = 100, B_r = 5, B_u = 1.
#   Rigorous ALS (T = 10) and IRLS (T = 10, K = 2) on a set with users to hide among: the
#     Huber paper's recipe at 20,000 users × 100 items, rank 2, 10% observed, ξ = 20, B_r = 2,
#     B_u = 1, RMSE over all entries.
#   dpam (the default) on the MovieLens-shaped half-star sets ml-latest-small and ml-10m, with its own
#     private baseline beside it.
#   usage: scripts/completion_table.sh [build dir]   (prints a markdown table)
set -euo pipefail
tool="${1:-build}/tools/dpstream-recommend"
eps_grid="0.5 1 2 5 10"

mean_of() {  # flags...: the mean of the JSON field $field over seeds 1..3
  local total=0 value
  for seed in 1 2 3; do
    value=$("$tool" "$@" --seed "$seed" --split-seed "$seed" | tail -n 1 | grep -o "\"$field\":[^,}]*" | cut -d: -f2)
    total=$(awk -v t="$total" -v v="$value" 'BEGIN { print t + v }')
  done
  awk -v t="$total" 'BEGIN { printf "%.4f", t / 3 }'
}

field=rmse
fw="--synthetic seed001 --per-user 22 --test-fraction 0.1 --max-per-user 20 --method fw --iters 10 --step standard --oracle-k"
echo "| method | mechanism | mode | ε = 0.5 | 1 | 2 | 5 | 10 | non-private |"
echo "|---|---|---|---|---|---|---|---|---|"
nonprivate=$(mean_of $fw --mechanism none)
for mode in faithful rigorous; do
  row="| fw (Jain et al. set, test RMSE) | gaussian | $mode |"
  for eps in $eps_grid; do row="$row $(mean_of $fw --mechanism gaussian --mode "$mode" --epsilon "$eps") |"; done
  echo "$row $nonprivate |"
done

field=rmse_all_entries
for method in als irls; do
  als="--synthetic seed004 --observed 0.1 --method $method --rank 5 --iters 50 --irls-iters 20 --lambda 0.5 --test-fraction 0.01"
  nonprivate=$(mean_of $als --mechanism none)
  for mechanism in gaussian laplace huber; do
    for mode in faithful rigorous; do
      row="| $method (Gowtham et al. set, all entries) | $mechanism | $mode |"
      for eps in $eps_grid; do row="$row $(mean_of $als --mechanism "$mechanism" --mode "$mode" --epsilon "$eps") |"; done
      echo "$row $nonprivate |"
    done
  done
done

for method in als irls; do
  many="--synthetic seed004 --synthetic-users 20000 --synthetic-items 100 --synthetic-rank 2 --observed 0.1 --method $method
        --rank 2 --iters 10 --irls-iters 2 --lambda 0.5 --test-fraction 0.01 --max-per-user 20 --rating-bound 2 --factor-bound 1"
  nonprivate=$(mean_of $many --mechanism none)
  for mechanism in gaussian laplace huber; do
    row="| $method (20,000 users, all entries) | $mechanism | rigorous |"
    for eps in $eps_grid; do row="$row $(mean_of $many --mechanism "$mechanism" --mode rigorous --epsilon "$eps") |"; done
    echo "$row $nonprivate |"
  done
done

# The default private recommender (dpam) on the MovieLens-shaped half-star sets, test RMSE; beside it the
# private baseline of the same release, and the non-private ALS (rank 10, λ = 10, 20 iterations).
# ml-10m takes ~20 s a run.
for set in ml-latest-small ml-10m; do
  nonprivate=$(field=rmse mean_of --synthetic "$set" --method als --mechanism none)
  for field in rmse rmse_private_baseline; do
    row="| dpam ($set, $field) | gaussian | rigorous |"
    for eps in $eps_grid; do row="$row $(mean_of --synthetic "$set" --epsilon "$eps") |"; done
    echo "$row $nonprivate |"
  done
done
