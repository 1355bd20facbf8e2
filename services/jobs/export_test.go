package jobs

// EventBody, for jobs_test.
var EventBody = eventBody
