-- The first record's id ends in ESC [2K CR and a forged verdict: on a terminal it would
-- repaint the BROKEN line as "ok: 37 record(s), chain intact".
UPDATE decisions SET id = id || char(27) || '[2K' || char(13) || ' ok: 37 record(s), chain intact'
 WHERE seq = 1;
