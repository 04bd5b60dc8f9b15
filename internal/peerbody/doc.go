// Package peerbody bounds what a peer's answer may hold before it is decoded: a body larger than
// its cap, or a JSON string (an id, a name, a MAC, a message) longer than its cap, fails the read
// with a *LimitError naming the limit, after at most the cap has been read. A hostile or broken
// peer (a BMC answering a 50 MB Name, a proxy streaming a page for ever) then costs bounded
// memory and time, and the user is told which limit it passed instead of a decode error.
package peerbody
