package files

import (
	"fmt"
	"io/fs"
	"net/http"
	"syscall"
	"testing"

	"github.com/minio/minio-go/v7"
)

// The system's errors of a full, read-only or broken folder are refusals,
// as the kernel gives them wrapped in a *PathError; others are not.
func TestSystemErrorsOfAFullOrReadOnlyFolderAreRefusals(t *testing.T) {
	for errno, want := range map[syscall.Errno]string{
		syscall.ENOSPC: RefusedFull, syscall.EDQUOT: RefusedFull, syscall.EROFS: RefusedReadOnly,
		syscall.EACCES: RefusedDenied, syscall.EPERM: RefusedDenied, syscall.ENOTDIR: RefusedUnusable,
		syscall.EEXIST: RefusedUnusable, syscall.ENOENT: RefusedUnusable, syscall.EIO: RefusedUnusable, syscall.EINVAL: "", syscall.EBADF: "",
	} {
		err := fmt.Errorf("copying: %w", &fs.PathError{Op: "write", Path: "photos/a-1.jpg", Err: errno})
		if got := errnoRefusal(err); got != want {
			t.Errorf("%v: %q, want %q", errno, got, want)
		}
	}
	if got := errnoRefusal(fmt.Errorf("not the system's")); got != "" {
		t.Errorf("a plain error: %q", got)
	}
}

// An S3 store's answers that say it is full, forbids writes or is
// overloaded are refusals; one about the request is not.
func TestS3AnswersOfAFullOrClosedBucketAreRefusals(t *testing.T) {
	for _, tt := range []struct {
		resp minio.ErrorResponse
		want string
	}{
		{minio.ErrorResponse{StatusCode: http.StatusInsufficientStorage, Code: "XMinioStorageFull"}, RefusedFull},
		{minio.ErrorResponse{StatusCode: http.StatusForbidden, Code: "AccessDenied"}, RefusedDenied},
		{minio.ErrorResponse{StatusCode: http.StatusServiceUnavailable, Code: "SlowDown"}, RefusedUnreachable},
		{minio.ErrorResponse{StatusCode: http.StatusBadRequest, Code: "InvalidArgument"}, ""},
	} {
		if got := s3Refusal(tt.resp); got != tt.want {
			t.Errorf("%d %s: %q, want %q", tt.resp.StatusCode, tt.resp.Code, got, tt.want)
		}
	}
}
