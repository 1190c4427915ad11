extern long stats_total, stats_calls;
void stats_record(long value);
