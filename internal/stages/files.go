package stages

import "github.com/bootstrap-dev/bootstrap/internal/filehash"

// fileSHA256 is the hex SHA-256 of a file's content, streamed (ISOs are large).
func fileSHA256(path string) (string, error) {
	sum, _, err := filehash.SHA256(path)
	return sum, err
}
