-- lifecycle: root investigations in each lifecycle state at the end of each minute.
SELECT minute::BIGINT,
       pending::DOUBLE, running::DOUBLE, waiting::DOUBLE, recovering::DOUBLE,
       awaiting_human::DOUBLE, completed::DOUBLE, terminated::DOUBLE
FROM lifecycle
WHERE run_id = $1 AND agent = 'root'
ORDER BY minute;
