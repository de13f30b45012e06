//go:build !unix

package testdb

import "errors"

func (s *shared) lock() (unlock func(), err error) {
	return nil, errors.New("testdb: sharing datasets needs flock(2)")
}
