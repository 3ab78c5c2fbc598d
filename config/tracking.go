package config

// TrackingTableMaxKeys returns how many keys the CLIENT TRACKING table may hold before keys are
// evicted and invalidated (tracking-table-max-keys; 0: no limit).
func (c *Config) TrackingTableMaxKeys() int64 { return c.cur.Load().trackingTableMaxKeys }
