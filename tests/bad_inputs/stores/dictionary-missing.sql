-- The dictionary every record was compressed with is gone.
DELETE FROM dictionaries;
