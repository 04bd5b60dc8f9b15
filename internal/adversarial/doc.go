// Package adversarial holds no code, only tests: one per way an attacker or a careless operator
// has tried to get hostile input past bootstrap (issue 29 and the rounds before it), each driving
// the public entry point that input reaches and asserting that it is refused or neutralised with
// a clear message and that nothing outside the chosen folders changed. Add a test here for every
// new case; the fuzz targets live beside the readers they exercise (make fuzz runs them longer).
package adversarial
