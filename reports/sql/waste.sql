-- waste: the compute of one run's tool executions (execution_costs view), split by why it
-- was wasted; an execution wasted for several reasons counts once, under the first of
-- duplicate, discarded, incomplete, so useful + the three parts = all compute.
SELECT coalesce(sum(compute), 0) AS total,
       coalesce(sum(compute) FILTER (WHERE duplicate), 0) AS duplicate,
       coalesce(sum(compute) FILTER (WHERE NOT duplicate AND discarded), 0) AS discarded,
       coalesce(sum(compute) FILTER (WHERE NOT duplicate AND NOT discarded AND incomplete), 0) AS incomplete
FROM execution_costs
WHERE run_id = $1;
