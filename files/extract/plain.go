package extract

import (
	"bufio"
	"bytes"
	"context"
	"io"
)

// plainText copies UTF-8 text to out. The Files API only stores text
// that is valid UTF-8, so the text needs no conversion; anything else
// arriving here still comes out as valid UTF-8.
func plainText(ctx context.Context, r io.ReaderAt, size int64, out *output) error {
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10)
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte("\xEF\xBB\xBF")) {
		br.Discard(3)
	}
	for i := 0; ; i++ {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		// ReadRune turns invalid bytes into U+FFFD one at a time.
		c, _, err := br.ReadRune()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := out.writeRune(c); err != nil {
			return err
		}
	}
}
