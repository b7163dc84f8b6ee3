// Package rollingdeploy shows a payload contract changing under a running fleet. The
// same app exists in three releases, each its own binary:
//
//   - releasea knows version 1 of send_receipt: {order_id, email}.
//   - releaseb adds version 2 (email renamed to recipient, locale added with a default)
//     and writes it; it still decodes version 1 and upcasts it.
//   - releasec retires version 1: it only knows version 2.
//
// During the deploy, releasea and releaseb run side by side: releasea's workers leave
// version 2 jobs alone (the claim query only takes versions a worker decodes), so no
// job fails or burns an attempt. Once no version 1 job is left, releasec can replace
// releaseb. deploy_test.go builds the three binaries and plays this out.
package rollingdeploy
