package jobs

// Metrics, for jobs_test.
var (
	BatchJobsCreated    = batchJobsCreated
	BatchItemsProcessed = batchItemsProcessed
	BatchItemLatency    = batchItemLatency
	BatchJobsSwept      = batchJobsSwept
	WebhookAttempts     = webhookAttempts
	WebhookExhausted    = webhookExhausted
)
