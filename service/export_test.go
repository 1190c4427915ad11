package service

import (
	"context"
	"time"

	"github.com/mcpredict/mcpredict/service/work"
)

// SetBeforeCheck installs the local pool's test hook.
func SetBeforeCheck(cfg *Config, f func(context.Context, *work.Item)) { cfg.beforeCheck = f }

// SetRecovery sets the supervisor's period, the retry backoff bounds and
// the job store's busy timeout (tests: fast recovery, short lock waits).
func SetRecovery(cfg *Config, every, retryMin, retryMax, storeBusy time.Duration) {
	cfg.superviseEvery, cfg.retryMin, cfg.retryMax, cfg.storeBusy = every, retryMin, retryMax, storeBusy
}
