-- D36: a worker reads its wallet jobs by id, and only open ones run. By id alone a read
-- descends every month's primary key; this index holds only open jobs, so in the months
-- whose jobs are all finished it is empty and costs one page.
CREATE INDEX "wallet_jobs_open_id" ON "wallet_jobs" ("id") WHERE "completed_at" IS NULL AND "abandoned_at" IS NULL;
