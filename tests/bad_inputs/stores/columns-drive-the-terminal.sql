-- Columns audit list and export show, carrying C1 CSI (U+009B), an OSC title sequence and a
-- right-to-left override (U+202E): every reader must show them escaped.
UPDATE decisions SET engine_version = engine_version || char(155) || '2J'
                                       || char(27) || ']0;owned' || char(7),
                     created_at = substr(created_at, 1, 10) || char(8238) || substr(created_at, 11)
 WHERE seq = 2;
