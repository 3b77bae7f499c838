-- clock: how many simulated minutes the run touched (run_clock view), for the time axes.
SELECT minutes::BIGINT, makespan FROM run_clock WHERE run_id = $1;
