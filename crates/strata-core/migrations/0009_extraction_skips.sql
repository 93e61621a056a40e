-- A turn extraction read only in part (longer than it reads) or could not read at all (too long
-- for the model, a reply that never read): marked read so the rest of the conversation goes on,
-- with the reason in words. NULL: read whole.
ALTER TABLE extraction_reads ADD COLUMN skipped TEXT;
