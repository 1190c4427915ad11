package formatplugin

import "net/rpc"

// Client is the host side of the protocol: the object that go-plugin's
// Dispense(PluginName) returns. Calls block; package formats adds
// timeouts and supervision.
type Client struct {
	RPC *rpc.Client
}

// Go starts the call of a protocol method ("Info", "Detect", "Open",
// "Next", "Close") on the plugin and returns at once.
func (c *Client) Go(method string, args, reply any) *rpc.Call {
	return c.RPC.Go("Plugin."+method, args, reply, make(chan *rpc.Call, 1))
}
