package files

// Envelope lets the external tests check the client-visible answer to a
// Service error without going through HTTP.
var Envelope = envelope
