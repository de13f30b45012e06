//go:build !linux

package files

func (f *folder) syncAll(keys []string) error { return f.syncEach(keys) }
