#!/bin/sh
echo "hello from the pulumi-basic template (APP_HOME=$APP_HOME)"
