// Package progress renders pipeline events for people and machines: on a terminal a live region
// with a line per active stage (its bar drawn by progressbar/v3, amounts, rate, time left) cut to
// the terminal's width and redrawn when the terminal is resized (SIGWINCH), plain timestamped lines otherwise (progress throttled to a
// line every few seconds per stage, with a heartbeat so a long stage is never silent for more than
// about ten seconds), and one JSON object per event for --output json. cmd/ chooses the renderer;
// every renderer is safe to call from many goroutines.
package progress
