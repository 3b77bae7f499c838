-- termination_reasons: per run, terminated root investigations by reason (docs/metrics.md,
-- "counts per termination reason"). A termination without a recorded reason counts as
-- 'unspecified'. The same counts appear as the MAP metrics.termination_reasons.
CREATE OR REPLACE VIEW termination_reasons AS
SELECT run_id,
       coalesce(nullif(termination_reason, ''), 'unspecified') AS reason,
       count(*) AS investigations
FROM roots
WHERE final_state = 'terminated'
GROUP BY ALL;
