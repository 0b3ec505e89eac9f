-- The choices column audit list and export read is not JSON.
UPDATE decisions SET choices = '{not json' WHERE seq = 2;
