package storage

import "context"

type unhurriedKey struct{}

// Unhurried marks ctx as that of work no client waits for, such as the
// settlement of a batch of charges: a store may let requests in flight go
// first between the statements it runs for it.
func Unhurried(ctx context.Context) context.Context {
	return context.WithValue(ctx, unhurriedKey{}, true)
}

// IsUnhurried reports whether ctx was marked by Unhurried.
func IsUnhurried(ctx context.Context) bool {
	v, _ := ctx.Value(unhurriedKey{}).(bool)
	return v
}
