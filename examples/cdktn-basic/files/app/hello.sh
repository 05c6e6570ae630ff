#!/bin/sh
echo "hello from the cdk-basic template (APP_HOME=$APP_HOME)"
