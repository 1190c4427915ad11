package service

import (
	"context"

	"github.com/mcpredict/mcpredict/service/work"
)

// SetBeforeCheck installs the local pool's test hook.
func SetBeforeCheck(cfg *Config, f func(context.Context, *work.Item)) { cfg.beforeCheck = f }
