/* The sessions of one batch job in a sink: those whose session.json names the job
 * (`runmon summary --job ID`, one recorder per node). */
#ifndef RUNMON_SINK_JOB_SESSIONS_H
#define RUNMON_SINK_JOB_SESSIONS_H

#include <jansson.h>

/* The ids (JSON strings, in name order: start time) of the sessions in sink_dir whose
 * session.json has job.job_id equal to job_id. An empty array when none; NULL only when
 * memory runs out or sink_dir cannot be read (errno set). */
json_t *rm_sink_job_sessions(const char *sink_dir, const char *job_id);

#endif
