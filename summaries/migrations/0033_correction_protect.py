"""A summary with corrections cannot be deleted with them (PROTECT): it is unpublished
instead, and its corrections stay on record.

Only Django's deletion behaviour changes; the column and its constraint stay as they were,
so this is safe while the previous release serves.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("summaries", "0032_generation_notify"),
    ]

    operations = [
        migrations.AlterField(
            model_name="correction",
            name="summary",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="corrections",
                to="summaries.summary",
            ),
        ),
    ]
